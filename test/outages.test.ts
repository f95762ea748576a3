import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, silentLogger } from '@herald/core';
import { createDb } from '@herald/db';
import { createRedis, createRunQueue, RedisNoticeBus, TurnDoneListener } from '@herald/queue';
import { createIngressServer } from '@herald/ingress';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { gate } from './support/wait.ts';

const REDIS_PORT = 16_379 + Math.floor(Math.random() * 1000);

function startRedis(): ChildProcess {
  return spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
}

async function stopRedis(redis: ChildProcess): Promise<void> {
  redis.kill('SIGKILL');
  await new Promise((resolve) => redis.once('exit', resolve));
}

describe('Redis unreachable for a while', () => {
  let redis: ChildProcess;
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    redis = startRedis();
    fake = await startFakeOpenAI();
    await waitFor(async () => {
      const probe = createRedis(`redis://127.0.0.1:${REDIS_PORT}`, 'subscriber');
      try {
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    });
    stack = await startStack({
      model: fake,
      scheduler: true,
      env: { REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}`, HERALD_RECONCILE_INTERVAL_MS: '300' },
    });
  });
  afterAll(async () => {
    await stack.stop();
    if (redis.exitCode === null) await stopRedis(redis);
  });

  it('says not ready, still accepts messages, and answers them when Redis is back', async () => {
    expect((await stack.post('/v1/messages?wait=20', { chat_id: 'r1', user_id: 'u', text: 'before' })).body.reply.text).toBe('echo: before');
    await stopRedis(redis);
    const ready = await stack.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.postgres).toBe('ok');
    expect(ready.body.redis).not.toBe('ok');
    const during = await stack.post('/v1/messages', { chat_id: 'r1', user_id: 'u', text: 'during the outage' });
    expect(during.status).toBe(202);
    redis = startRedis();
    await waitFor(async () => (await stack.get('/readyz')).status === 200, { timeoutMs: 30_000, what: 'ready again' });
    const answered = await stack.waitForEvent(during.body.event_id, 30_000);
    expect(answered.reply.text).toBe('echo: during the outage');
  });
});

describe('Postgres unreachable', () => {
  it('makes /readyz say not ready and refuses messages with 503, writing nothing', async () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1:1/herald', PORT: '0' });
    const db = createDb({ url: config.database.url });
    const notices = new RedisNoticeBus(config.redis.url);
    const listener = new TurnDoneListener(notices, 'herald_t_pgdown');
    await listener.start();
    const queue = createRunQueue(notices.connection, 'herald_t_pgdown');
    const app = createIngressServer({ config, db, queue, notices, listener, logger: silentLogger });
    try {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().redis).toBe('ok');
      const post = await app.inject({
        method: 'POST',
        url: '/v1/messages',
        payload: { chat_id: 'c', user_id: 'u', text: 'hello' },
      });
      expect(post.statusCode).toBe(503);
      expect(post.json().error.code).toBe('unavailable');
      expect(await queue.count()).toBe(0);
    } finally {
      await app.close();
      await queue.close();
      await db.destroy();
      await notices.close();
    }
  });
});

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('graceful shutdown', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, workerProcesses: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('finishes the running turn before exiting 0 on SIGTERM', async () => {
    const worker = await stack.startProcess('worker', { HERALD_SHUTDOWN_TIMEOUT_MS: '20000' });
    const held = gate();
    fake.handler = async (request) => {
      await held.opened;
      return { text: `echo: ${request.lastUserText}` };
    };
    const sent = await stack.post('/v1/messages', { chat_id: 'sd1', user_id: 'u', text: 'finish me' });
    await fake.waitForCalls(sent.body.session_id);
    worker.child.kill('SIGTERM');
    // The model answers only once the worker is shutting down: the turn is still running then.
    await waitFor(async () => worker.output().includes('shutting down'), { what: 'the worker shutting down' });
    held.open();
    expect(await worker.exited).toBe(0);
    const event = (await stack.get(`/v1/events/${sent.body.event_id}`)).body;
    expect(event.reply.text).toBe('echo: finish me');
  });

  it('hands a turn that outlasts the deadline back, and another worker finishes it', async () => {
    // The worker's grace is the deadline minus 5 s for closing connections: 1 s here. Its model call
    // never answers; the next worker's does.
    const worker = await stack.startProcess('worker', { HERALD_SHUTDOWN_TIMEOUT_MS: '6000' });
    fake.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    fake.script({ hang: true });
    const sent = await stack.post('/v1/messages', { chat_id: 'sd2', user_id: 'u', text: 'hand me over' });
    await fake.waitForCalls(sent.body.session_id);
    expect(await stopProcess(worker, 'SIGTERM')).toBe(0);
    expect((await stack.get(`/v1/events/${sent.body.event_id}`)).body.status).toBe('processing');
    const lease = await stack.database.db.selectFrom('session_leases').selectAll().where('session_id', '=', sent.body.session_id).executeTakeFirstOrThrow();
    expect(lease.released).toBe(true);
    await stack.startProcess('worker');
    const event = await stack.waitForEvent(sent.body.event_id, 30_000);
    expect(event.reply.text).toBe('echo: hand me over');
    expect(fake.requestsFor(sent.body.session_id)).toHaveLength(2);
    const turn = await stack.database.db.selectFrom('turns').selectAll().where('session_id', '=', sent.body.session_id).executeTakeFirstOrThrow();
    // Handed back cleanly: not counted against the crash budget.
    expect(turn.attempts).toBe(1);
  });
});
