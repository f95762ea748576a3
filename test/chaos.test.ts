import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { sql } from 'kysely';
import { withDefaultUser } from '@herald/db';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
import { ADMIN_URL } from './support/test-database.ts';

const SESSIONS = 100;
const MESSAGES = 5;
const WORKERS = 3;

type Disruption = 'none' | 'redis-flush' | 'postgres-terminate';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Tries to break the core promises with real processes: every message answered exactly once, in
 * order, never two model calls in flight for one session, nothing lost or duplicated, while worker
 * processes are SIGKILLed at random and Redis or Postgres lose their state or connections.
 */
describe('chaos: many sessions, several worker processes, SIGKILL at random', () => {
  let stack: Stack | undefined;

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  async function disrupt(kind: Disruption, redisUrl: string, database: string): Promise<void> {
    if (kind === 'redis-flush') {
      // A dedicated logical database, so other test files sharing this Redis keep their queues.
      const redis = new Redis(redisUrl);
      await redis.flushdb();
      redis.disconnect();
    } else if (kind === 'postgres-terminate') {
      const admin = new pg.Client({ connectionString: withDefaultUser(ADMIN_URL) });
      await admin.connect();
      for (let round = 0; round < 3; round++) {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
        await sleep(300);
      }
      await admin.end();
    }
  }

  it.each<[Disruption, number]>([
    ['none', 9],
    ['redis-flush', 10],
    ['postgres-terminate', 11],
  ])('holds with disruption: %s', { timeout: 300_000 }, async (disruption, redisDb) => {
    // Model calls long enough that a kill usually lands mid-turn.
    const fake: FakeLLM = await startFakeOpenAI({ latencyMs: 120 });
    const redisUrl = `redis://127.0.0.1:6379/${redisDb}`;
    const redis = new Redis(redisUrl);
    await redis.flushdb();
    redis.disconnect();
    stack = await startStack({
      model: fake,
      workerProcesses: true,
      env: {
        REDIS_URL: redisUrl,
        // Two cores shared by three booting worker processes, Postgres, Redis and the test: give stalls room.
        HERALD_LEASE_TTL_MS: '3000',
        HERALD_WORKER_CONCURRENCY: '16',
        // A kill interrupts every turn its worker holds; with a dozen kills a session could meet the
        // default crash budget of 3 by bad luck, and the budget has its own test.
        HERALD_TURN_MAX_ATTEMPTS: '20',
      },
    });
    const running = stack;
    const ready = (worker: HeraldProcess) => worker.output().includes('worker started');
    for (let i = 0; i < WORKERS; i++) running.spawn('worker');
    await waitFor(async () => running.processes().every(ready), { timeoutMs: PROCESS_START_MS, what: 'workers started' });
    const total = SESSIONS * MESSAGES;
    const answered = async () => {
      const rows = await sql<{ done: string }>`SELECT count(*) AS done FROM inbound_events WHERE status = 'done'`.execute(running.database.db);
      return Number(rows.rows[0]?.done);
    };

    const clients = Array.from({ length: SESSIONS }, async (_, s) => {
      for (let m = 0; m < MESSAGES; m++) {
        const body = { chat_id: `chaos-${s}`, user_id: `u${s}`, text: `s${s} m${m}`, idempotency_key: `m${m}` };
        for (let attempt = 0; ; attempt++) {
          const response = await running.post('/v1/messages', body).catch(() => ({ status: 0, body: undefined }));
          if (response.status === 202 || response.status === 200) break;
          if (response.status >= 400 && response.status < 500) throw new Error(`refused: ${JSON.stringify(response.body)}`);
          if (attempt > 300) throw new Error(`could not send ${body.text}`);
          await sleep(100);
        }
        await sleep(Math.random() * 200);
      }
    });
    const allSent = Promise.all(clients);

    // Kills only workers that are up and working, until every message is answered (or 15 kills;
    // then the survivors finish the work).
    const chaos = (async () => {
      let kills = 0;
      let disrupted = false;
      const deadline = Date.now() + 150_000;
      while (Date.now() < deadline) {
        await sleep(600 + Math.random() * 1000);
        const done = await answered().catch(() => 0);
        if ((done === total && kills >= 4) || kills >= 15) break;
        const live = running.processes().filter(ready);
        const victim = live[Math.floor(Math.random() * live.length)];
        if (victim && live.length > 1) {
          await stopProcess(victim, 'SIGKILL');
          kills++;
          running.spawn('worker');
        }
        if (!disrupted && kills >= 2) {
          disrupted = true;
          await disrupt(disruption, redisUrl, running.database.name);
        }
      }
      return kills;
    })();

    await allSent;
    const kills = await chaos;
    expect(kills).toBeGreaterThanOrEqual(4);

    await waitFor(async () => (await answered()) === total, { timeoutMs: 120_000, intervalMs: 250, what: 'every message answered' });

    const resumed = await sql<{ n: string }>`SELECT count(*) AS n FROM turns WHERE attempts > 1`.execute(running.database.db);
    process.stderr.write(`chaos ${disruption}: ${kills} kills, ${resumed.rows[0]?.n} resumed turns\n`);
    const events = await running.database.db.selectFrom('inbound_events').select(['text', 'reply_text', 'status']).execute();
    expect(events).toHaveLength(total);
    for (const event of events) expect(event.reply_text).toBe(`echo: ${event.text}`);

    const messages = await sql<{ chat_id: string; role: string; content: string }>`
      SELECT s.chat_id, m.role, m.content FROM messages m JOIN sessions s ON s.id = m.session_id
      ORDER BY s.chat_id, m.seq`.execute(running.database.db);
    const transcripts = new Map<string, string[]>();
    for (const row of messages.rows) {
      const list = transcripts.get(row.chat_id) ?? [];
      list.push(`${row.role}:${row.content}`);
      transcripts.set(row.chat_id, list);
    }
    expect(transcripts.size).toBe(SESSIONS);
    for (let s = 0; s < SESSIONS; s++) {
      const expected = Array.from({ length: MESSAGES }, (_, m) => [`user:s${s} m${m}`, `assistant:echo: s${s} m${m}`]).flat();
      expect(transcripts.get(`chaos-${s}`)).toEqual(expected);
    }
    // Never two model calls in flight for one session, counted for every session.
    expect(fake.maxConcurrentPerKey.size).toBe(SESSIONS);
    expect(new Set(fake.maxConcurrentPerKey.values())).toEqual(new Set([1]));
  });
});
