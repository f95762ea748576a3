import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@herald/core';
import { claimOutbound, enqueueOutbound, markAttemptFailed } from '@herald/delivery';
import { HookRegistry, Hooks, verifySignature } from '@herald/hooks';
import { dispatchManualRun, fireOccurrence } from '@herald/cron';
import { HookEventService } from '@herald/scheduler';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { startHookReceiver, writeHooks } from './support/hook-fixtures.ts';

const SECRET = 'hook-events-secret-0123456789';
const LOG = join(tmpdir(), `herald-hook-events-${randomUUID()}.log`);

/** Appends every event it is given to LOG, one JSON line each: what fired, and how often. */
const RECORDER = `
  import { appendFileSync } from 'node:fs';
  export default function register(ctx) {
    ctx.on('cron_fire', (event) => { appendFileSync(${JSON.stringify(LOG)}, JSON.stringify(event) + '\\n'); });
    ctx.on('delivery_failed', (event) => { appendFileSync(${JSON.stringify(LOG)}, JSON.stringify(event) + '\\n'); });
  }`;

function logged(event: string): Record<string, any>[] {
  let text = '';
  try {
    text = readFileSync(LOG, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((entry) => entry.event === event);
}

describe('hook events fired outside a turn: cron_fire and delivery_failed', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startHookReceiver>>;
  let file: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = (request) => ({ text: `done: ${request.lastUserText.slice(-20)}` });
    receiver = await startHookReceiver();
    file = writeHooks(
      { 'recorder.mjs': RECORDER },
      `hooks:
  - { name: cron-recorder, event: cron_fire, module: ./recorder.mjs }
  - { name: failure-recorder, event: delivery_failed, module: ./recorder.mjs }
  - { name: siem-cron, event: cron_fire, url: ${receiver.url} }
`,
    );
    stack = await startStack({
      model: fake,
      scheduler: true,
      env: { HERALD_HOOKS_FILE: file, HERALD_HOOKS_SECRET: SECRET, HERALD_WEB_ALLOWLIST: '127.0.0.1', HERALD_SCHEDULER_TICK_MS: '50' },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.close();
  });

  it('fires cron_fire once per run, manual and scheduled, though the fire and the run are retried', async () => {
    const created = await stack.post('/v1/cron/jobs', { user_id: 'carol', prompt: 'check the backups', schedule: 'every 1h', name: 'backups' });
    expect(created.status).toBe(201);
    const jobId: string = created.body.job_id;
    const manual = await stack.post(`/v1/cron/jobs/${jobId}/run`, {});
    expect(manual.status).toBe(202);
    const runId: string = manual.body.run_id;
    const fired = await waitFor(async () => logged('cron_fire').find((event) => event.run_id === runId), { what: 'cron_fire of the manual run' });
    expect(fired).toMatchObject({ job_id: jobId, job_name: 'backups', trigger: 'manual', user_id: 'api:carol', profile_id: 'main' });
    // A retried manual-run job finds its run started and does nothing.
    expect(await dispatchManualRun(stack.database.db, runId)).toBeNull();

    // The scheduled occurrence: let an hour pass on the scheduler's clock.
    const job = await stack.database.db.selectFrom('cron_jobs').select('next_run_at').where('id', '=', jobId).executeTakeFirstOrThrow();
    await sql`UPDATE cron_clock SET offset_ms = offset_ms + ${3_700_000}`.execute(stack.database.db);
    const scheduled = await waitFor(async () => logged('cron_fire').find((event) => event.job_id === jobId && event.trigger === 'schedule'), { what: 'the scheduled cron_fire' });
    // The fire job retried after a crash (pg-boss hands it out again): the occurrence is past, nothing happens.
    expect(await fireOccurrence(stack.database.db, jobId, job.next_run_at as Date)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = logged('cron_fire').filter((event) => event.job_id === jobId);
    expect(events.map((event) => event.run_id).sort()).toEqual([runId, (scheduled as { run_id: string }).run_id].sort());
    // The url observer got each fire once, signed.
    await waitFor(async () => (receiver.received.filter((r) => r.headers['x-herald-event'] === 'cron_fire').length >= 2 ? true : undefined), { what: 'url deliveries' });
    const bodies = receiver.received.filter((r) => r.headers['x-herald-event'] === 'cron_fire');
    expect(bodies.every((r) => verifySignature(SECRET, r.body, r.headers['x-herald-signature'] as string))).toBe(true);
    expect(new Set(bodies.map((r) => JSON.parse(r.body).run_id)).size).toBe(bodies.length);
    expect(await stack.database.db.selectFrom('hook_events').select('id').execute()).toEqual([]);
  });

  it('fires delivery_failed when a delivery gives up, once, with the reason', async () => {
    const db = stack.database.db;
    const { id } = await enqueueOutbound(db, { idempotencyKey: `test:${randomUUID()}`, platform: 'nowhere', target: { chatId: 'c1' }, text: 'the report', source: 'test' });
    const [row] = await claimOutbound(db, { platforms: ['nowhere'], limit: 1, claimMs: 30_000 });
    expect(row?.id).toBe(id);
    await markAttemptFailed(db, row!, 'the platform refused: chat not found', null);
    const event = await waitFor(async () => logged('delivery_failed').find((entry) => entry.delivery_id === id), { what: 'delivery_failed' });
    expect(event).toMatchObject({ platform: 'nowhere', source: 'test', error: 'the platform refused: chat not found', text: 'the report', target: { chatId: 'c1' } });
    // Handing it back for a retry is not a failure; giving up again is a second one.
    const pending = await enqueueOutbound(db, { idempotencyKey: `test:${randomUUID()}`, platform: 'nowhere', target: { chatId: 'c2' }, text: 'x', source: 'test' });
    const [again] = await claimOutbound(db, { platforms: ['nowhere'], limit: 1, claimMs: 30_000 });
    await markAttemptFailed(db, again!, 'timeout', new Date(Date.now() + 60_000));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(logged('delivery_failed').filter((entry) => entry.delivery_id === pending.id)).toEqual([]);
    expect(logged('delivery_failed').filter((entry) => entry.delivery_id === id)).toHaveLength(1);
  });

  it('fires each event exactly once while several schedulers drain the same backlog', async () => {
    const db = stack.database.db;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await enqueueOutbound(db, { idempotencyKey: `burst:${randomUUID()}`, platform: 'burst', target: { chatId: `b${i}` }, text: 't', source: 'test' })).id);
    }
    // Twelve rows give up in one statement; two more schedulers join the stack's own to fire them.
    await db.updateTable('outbox').set({ status: 'failed', last_error: 'burst' }).where('platform', '=', 'burst').execute();
    const registry = await HookRegistry.fromFile(file);
    const others = [0, 1].map(() => new HookEventService({ db, hooks: new Hooks({ registry, db, logger: silentLogger, commands: null }), logger: silentLogger, tickMs: 10_000 }));
    await Promise.all(others.map((service) => service.drain()));
    await waitFor(async () => (ids.every((id) => logged('delivery_failed').some((entry) => entry.delivery_id === id)) ? true : undefined), { what: 'the burst' });
    const counts = ids.map((id) => logged('delivery_failed').filter((entry) => entry.delivery_id === id).length);
    expect(counts).toEqual(ids.map(() => 1));
  });
});
