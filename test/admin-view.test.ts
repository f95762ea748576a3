import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { HERALD_BIN, spawnHerald, startStack, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';

const exec = promisify(execFile);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('the admin view and herald status', () => {
  let llm: FakeLLM;
  let stack: Stack;
  const processes: HeraldProcess[] = [];

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `ok: ${request.lastUserText}` }) });
    stack = await startStack({ workers: 0, env: { HERALD_MODEL: 'openai/gpt-test', OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' } });
  });
  afterAll(async () => {
    for (const process of processes) process.child.kill('SIGKILL');
    await stack?.stop();
    await llm?.close();
  });

  const anonymous = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.url}${path}`, { headers });

  it('answers 401 without the API token, and serves Bull Board with it (bearer, or basic with the token as password)', async () => {
    const refused = await anonymous('/admin/queues');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm="Herald admin"/);
    expect((await anonymous('/admin/queues/api/queues')).status).toBe(401);
    expect((await anonymous('/admin/queues', { authorization: basic('ops', 'wrong-token-000') })).status).toBe(401);
    expect((await anonymous('/admin/queues', { authorization: 'Bearer nope' })).status).toBe(401);

    const page = await anonymous('/admin/queues', { authorization: `Bearer ${TEST_TOKEN}` });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    const api = await anonymous('/admin/queues/api/queues', { authorization: basic('ops', TEST_TOKEN) });
    expect(api.status).toBe(200);
    const names = ((await api.json()) as { queues: { name: string }[] }).queues.map((queue) => queue.name).sort();
    // Reviews are pg-boss jobs in Postgres (GET /v1/admin/jobs?queue=reviews), not a BullMQ queue.
    expect(names).toEqual(['runs']);
    expect((await anonymous('/v1/admin/status')).status).toBe(401);
  });

  it('reports the oldest waiting turn while no worker runs, then live roles once they start', async () => {
    const posted = await stack.post('/v1/messages', { chat_id: 'admin-1', user_id: 'u', text: 'anyone there?' });
    expect(posted.status).toBe(202);
    const waiting = (await stack.get('/v1/admin/status')).body;
    expect(waiting.roles).toEqual({ ingress: 0, worker: 0, reviewer: 0, scheduler: 0 });
    expect(waiting.oldest_waiting_turn.event_id).toBe(posted.body.event_id);
    expect(waiting.oldest_waiting_turn.session_id).toBe(posted.body.session_id);
    const inbox = waiting.queues.find((queue: any) => queue.queue === 'inbox');
    expect(inbox.waiting).toBe(1);
    expect(waiting.queues.find((queue: any) => queue.queue === 'runs').waiting).toBe(1);

    for (const role of ['worker', 'scheduler']) processes.push(spawnHerald(role, { ...stack.env, LOG_LEVEL: 'info' }));
    await stack.waitForEvent(posted.body.event_id, 60_000);
    const live = await waitFor(
      async () => {
        const status = (await stack.get('/v1/admin/status')).body;
        return status.roles.worker === 1 && status.roles.scheduler === 1 ? status : undefined;
      },
      { timeoutMs: 60_000, what: 'worker and scheduler heartbeats' },
    );
    expect(live.oldest_waiting_turn).toBeNull();
    expect(live.queues.find((queue: any) => queue.queue === 'inbox').waiting).toBe(0);
  });

  it('lists the Postgres-side jobs and counts dead letters', async () => {
    await stack.database.db
      .insertInto('outbox')
      .values({ idempotency_key: 'admin-test', platform: 'telegram', target: JSON.stringify({ chatId: '1' }), text: 'hi', source: 'reply', status: 'failed', last_error: 'chat not found' })
      .execute();
    const status = (await stack.get('/v1/admin/status')).body;
    expect(status.dead_letters).toEqual({ deliveries: 1, reviews: 0, cron_jobs: 0, telegram_updates: 0, discord_events: 0, slack_events: 0, runs: 0 });
    const failed = await stack.get('/v1/admin/jobs?queue=outbox&status=failed');
    expect(failed.status).toBe(200);
    expect(failed.body.jobs.map((job: any) => job.last_error)).toEqual(['chat not found']);
    const inbox = await stack.get('/v1/admin/jobs?queue=inbox&limit=5');
    expect(inbox.body.jobs.map((job: any) => job.status)).toEqual(['done']);
    const bad = await stack.get('/v1/admin/jobs?queue=everything');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('queue');
    expect((await stack.get('/v1/admin/jobs?queue=outbox&limit=100000')).status).toBe(400);
  });

  it('prints the status in the terminal: herald status', async () => {
    const env = { ...process.env, ...stack.env, HERALD_URL: stack.url };
    const { stdout } = await exec(process.execPath, [HERALD_BIN, 'status'], { env });
    expect(stdout).toMatch(/roles alive: +ingress 0 +worker 1 +reviewer 0 +scheduler 1/);
    expect(stdout).toMatch(/^inbox +0 +0 +0 +0 +0 s$/m);
    expect(stdout).toContain('oldest waiting turn: none');
    expect(stdout).toContain('dead letters: deliveries 1, reviews 0, cron_jobs 0');
    const json = JSON.parse((await exec(process.execPath, [HERALD_BIN, 'status', '--json'], { env })).stdout);
    expect(json.roles.worker).toBe(1);
    const refused = await exec(process.execPath, [HERALD_BIN, 'status'], { env: { ...env, HERALD_API_TOKEN: 'wrong-token-000' } }).catch((error) => error);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the API answered 401 (set HERALD_API_TOKEN)');
  });
});
