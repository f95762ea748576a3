import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { PROCESS_START_MS, startStack, TEST_TOKEN } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { answeredCount, expectExactlyOnce, firstAnswerAfter, recordRecovery, startOwnPostgres, startOwnRedis, steadyTraffic } from './fault-support.ts';
import type { OwnService } from './fault-support.ts';

const LOAD = { sessions: 8, messages: 6, pauseMs: 250 };

/**
 * Postgres and Redis restarted under load, each a server the test owns: two worker processes and
 * an ingress keep answering afterwards, and every message is answered exactly once.
 */
describe('faults: the services restart under load', { timeout: 4 * PROCESS_START_MS }, () => {
  let model: FakeLLM | undefined;
  let stack: Stack | undefined;
  const owned: OwnService[] = [];

  afterEach(async () => {
    await stack?.stop();
    await model?.close();
    for (const service of owned.splice(0)) await service.stop();
    stack = undefined;
  });

  async function stackOn(postgres: OwnService | undefined, redis: OwnService | undefined): Promise<Stack> {
    model = await startFakeOpenAI({ latencyMs: 80 });
    stack = await startStack({
      model,
      workerProcesses: true,
      ...(postgres ? { adminUrl: postgres.url } : {}),
      env: { ...(redis ? { REDIS_URL: redis.url } : {}), HERALD_LEASE_TTL_MS: '3000', HERALD_TURN_MAX_ATTEMPTS: '20' },
    });
    await Promise.all([stack.startProcess('worker'), stack.startProcess('worker')]);
    return stack;
  }

  it('Postgres restarted (fast shutdown, every connection cut): nothing lost, nothing answered twice', async () => {
    const postgres = await startOwnPostgres();
    owned.push(postgres);
    const running = await stackOn(postgres, undefined);
    const traffic = steadyTraffic(() => [running.url], TEST_TOKEN, { prefix: 'pg', ...LOAD });
    await waitFor(async () => (await answeredCount(running.database.db)) >= 10, { timeoutMs: 60_000, what: 'traffic under way' });
    const down = Date.now();
    await postgres.restart();
    const healed = new Date();
    const first = await firstAnswerAfter(running.database.db, healed);
    await traffic.sent;
    await expectExactlyOnce(running.database.db, { prefix: 'pg', ...LOAD });
    recordRecovery('postgres-restart', first.getTime() - healed.getTime(), { downMs: healed.getTime() - down });
    expect(first.getTime() - healed.getTime()).toBeLessThan(30_000);
  });

  it('Redis restarted empty (queues and notices gone): the reconciler finds every turn, each answered once', async () => {
    const redis = await startOwnRedis();
    owned.push(redis);
    const running = await stackOn(undefined, redis);
    const traffic = steadyTraffic(() => [running.url], TEST_TOKEN, { prefix: 'redis', ...LOAD });
    await waitFor(async () => (await answeredCount(running.database.db)) >= 10, { timeoutMs: 60_000, what: 'traffic under way' });
    const down = Date.now();
    await redis.restart();
    const healed = new Date();
    const first = await firstAnswerAfter(running.database.db, healed);
    await traffic.sent;
    await expectExactlyOnce(running.database.db, { prefix: 'redis', ...LOAD });
    recordRecovery('redis-restart-flushed', first.getTime() - healed.getTime(), { downMs: healed.getTime() - down });
    expect(first.getTime() - healed.getTime()).toBeLessThan(30_000);
  });
});
