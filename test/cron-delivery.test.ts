import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { sendJson, startFakeHttp } from './support/fake-http.ts';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';

interface Hook {
  url: string;
  posts: { key: string | undefined; body: any }[];
  close(): Promise<void>;
}

/** A receiver for webhook deliveries that records every POST. */
async function startHook(): Promise<Hook> {
  const http = await startFakeHttp((_request, response) => sendJson(response, 200, { ok: true }));
  return {
    url: `${http.origin}/hook`,
    get posts() {
      return http.requests.map((request) => ({ key: request.headers['idempotency-key'] as string | undefined, body: request.body }));
    },
    close: () => http.close(),
  };
}

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('cron runs deliver their reports', { timeout: 3 * PROCESS_START_MS }, () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let hook: Hook;
  let stack: Stack;
  let worker: HeraldProcess;
  let digests = 0;

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    llm.handler = (request) => {
      const text = request.lastUserText;
      if (text.includes('broken job')) return { error: { status: 500, body: { error: { message: 'model down' } } } };
      if (text.includes('quiet job')) return { text: '[SILENT]' };
      if (text.includes('daily digest')) return { text: `digest ${++digests}` };
      return { text: 'hourly check: all good' };
    };
    telegram = await startFakeTelegram();
    hook = await startHook();
    stack = await startStack({
      model: llm,
      // The delivery consumer runs in worker processes, so a test can kill one mid-send.
      workers: 0,
      scheduler: true,
      env: {
        HERALD_PROVIDER_MAX_RETRIES: '0',
        ...telegram.env,
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: 'cron-secret_1',
        TELEGRAM_ALLOWED_USERS: '*',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        HERALD_CRON_MAX_FAILURES: '3',
        // The test's webhook receiver listens on loopback, which webhooks may not reach by default.
        HERALD_WEB_ALLOWLIST: '127.0.0.1',
        // The jobs' owner is an operator: they deliver to chats and webhooks it never wrote in.
        HERALD_OPERATORS: 'api:42',
      },
    });
    worker = await stack.startProcess('worker');
  }, 2 * PROCESS_START_MS);

  afterAll(async () => {
    await stack.stop();
    await hook.close();
    await telegram.close();
  });

  const createJob = async (body: Record<string, unknown>) => {
    const response = await stack.post('/v1/cron/jobs', { user_id: '42', schedule: 'every 1d', ...body });
    expect(response.status).toBe(201);
    return response.body as { job_id: string };
  };
  const runNow = async (jobId: string) => {
    const response = await stack.post(`/v1/cron/jobs/${jobId}/run`, {});
    expect(response.status).toBe(202);
    return response.body.run_id as string;
  };
  const runOf = async (jobId: string, runId: string) => (await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs.find((run: any) => run.run_id === runId);
  const waitForRun = (jobId: string, runId: string, done: (run: any) => boolean, what: string) =>
    waitFor(
      async () => {
        const run = await runOf(jobId, runId);
        return run && done(run) ? run : undefined;
      },
      { timeoutMs: 40_000, what },
    );
  const outboxRow = (key: string) => stack.database.db.selectFrom('outbox').selectAll().where('idempotency_key', '=', key).executeTakeFirst();

  it('posts one Telegram message per run, even when the delivery consumer dies mid-send', async () => {
    // Telegram only lets a bot post where it has been talked to.
    telegram.userMessage({ chatId: 70, from: { id: 42 }, text: 'hello bot' });
    const job = await createJob({ prompt: 'daily digest', deliver: 'telegram:70' });
    const first = await runNow(job.job_id);
    const delivered = await waitForRun(job.job_id, first, (run) => run.deliveries[0]?.status === 'delivered', 'first digest delivered');
    expect(delivered.status).toBe('succeeded');
    expect(delivered.output).toBe('digest 1');
    expect(delivered.duration_ms).toBeGreaterThanOrEqual(0);
    expect(delivered.deliveries).toEqual([expect.objectContaining({ target: 'telegram:70', status: 'delivered', attempts: 1, receipt: { messageIds: ['2'] } })]);

    // The second report reaches Telegram, but the answer never comes back and the worker dies.
    telegram.failNext('sendMessage', { kind: 'store-then-hang' });
    const second = await runNow(job.job_id);
    const key = `cron:${second}:telegram:70`;
    await waitFor(
      async () => {
        const row = await outboxRow(key);
        return telegram.botMessages(70).length === 2 && row?.status === 'sending' && row.in_flight !== null;
      },
      { timeoutMs: 40_000, what: 'the second report in flight' },
    );
    await stopProcess(worker, 'SIGKILL');
    // The dead consumer's claim would lapse after a minute; expire it instead of waiting.
    await sql`UPDATE outbox SET claim_expires_at = now() WHERE idempotency_key = ${key}`.execute(stack.database.db);
    worker = await stack.startProcess('worker');
    const row = await waitFor(
      async () => {
        const current = await outboxRow(key);
        return current?.status === 'delivered' ? current : undefined;
      },
      { timeoutMs: 40_000, what: 'the second report reconciled' },
    );
    expect(row.attempts).toBe(2);
    expect(telegram.botMessages(70).map((message) => message.text)).toEqual(['digest 1', 'digest 2']);
    // A repeated completion pass cannot add a second row for the same run and target.
    const rows = await stack.database.db.selectFrom('outbox').select('idempotency_key').where('source', '=', 'cron').execute();
    expect(rows.map((r) => r.idempotency_key).sort()).toEqual([`cron:${first}:telegram:70`, key].sort());
  });

  it('refuses a webhook that points into the private network, and says why', async () => {
    const job = await createJob({ prompt: 'hourly check', deliver: 'webhook:http://169.254.169.254/latest/meta-data/' });
    const runId = await runNow(job.job_id);
    const run = await waitForRun(job.job_id, runId, (r) => r.deliveries[0]?.status === 'failed', 'webhook refused');
    expect(JSON.stringify(run.deliveries[0])).toMatch(/refused: .*link-local/);
  });

  it('posts to a webhook once per run, and delivers nothing for a [SILENT] answer', async () => {
    const job = await createJob({ prompt: 'hourly check', deliver: `webhook:${hook.url}` });
    const runId = await runNow(job.job_id);
    const run = await waitForRun(job.job_id, runId, (r) => r.deliveries[0]?.status === 'delivered', 'webhook delivery');
    expect(run.deliveries[0].receipt).toMatchObject({ messageIds: ['http-200'], status: 200 });
    expect(hook.posts).toEqual([{ key: `cron:${runId}:webhook:${hook.url}`, body: { idempotency_key: `cron:${runId}:webhook:${hook.url}`, source: 'cron', text: 'hourly check: all good' } }]);

    const quiet = await createJob({ prompt: 'quiet job', deliver: `webhook:${hook.url}` });
    const quietRun = await runNow(quiet.job_id);
    const silent = await waitForRun(quiet.job_id, quietRun, (r) => r.status !== 'running' && r.status !== 'pending', 'silent run');
    expect(silent.status).toBe('silent');
    expect(silent.deliveries).toEqual([]);
    expect(hook.posts).toHaveLength(1);
  });

  it('posts a failure notice per failed run and pauses the job after three in a row, telling its owner', async () => {
    telegram.userMessage({ chatId: 71, from: { id: 42 }, text: 'hello bot' });
    const job = await createJob({
      prompt: 'broken job',
      deliver: `webhook:${hook.url}`,
      origin: { platform: 'telegram', chat_type: 'dm', chat_id: '71' },
    });
    const before = hook.posts.length;
    for (let i = 1; i <= 3; i++) {
      const runId = await runNow(job.job_id);
      const run = await waitForRun(job.job_id, runId, (r) => r.status === 'failed' && r.deliveries.length > 0, `failed run ${i}`);
      expect(run.error).toMatch(/model could not be reached/);
    }
    await waitFor(async () => hook.posts.length === before + 3, { what: 'three failure notices' });
    const notices = hook.posts.slice(before).map((post) => post.body.text as string);
    expect(notices.map((text) => /Scheduled job "broken job" failed .*Failures in a row: (\d)/.exec(text)?.[1])).toEqual(['1', '2', '3']);
    const state = (await stack.get(`/v1/cron/jobs/${job.job_id}`)).body;
    expect(state).toMatchObject({ state: 'paused', enabled: false, consecutive_failures: 3, paused_reason: 'paused after 3 failed runs in a row' });
    await waitFor(async () => telegram.botMessages(71).length === 1, { what: 'the owner told' });
    expect(telegram.botMessages(71)[0]?.text).toMatch(/is paused: it failed 3 times in a row/);

    // Resuming starts the count over.
    const resumed = await stack.patch(`/v1/cron/jobs/${job.job_id}`, { enabled: true });
    expect(resumed.body).toMatchObject({ state: 'scheduled', consecutive_failures: 0 });
  });
});
