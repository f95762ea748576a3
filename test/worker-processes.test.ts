import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
import { gate } from './support/wait.ts';

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('several worker processes on one queue', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  let workers: HeraldProcess[] = [];
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, workers: 0 });
    workers = await Promise.all([stack.startProcess('worker'), stack.startProcess('worker')]);
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  it('answers every message exactly once, in order per session, and both workers take part', async () => {
    const sessions = 12;
    const perSession = 4;
    // Every session's first answer waits until all messages are in, so each session has a backlog
    // while a turn is running: a second worker that took the session then would call the model too.
    const allSent = gate();
    fake.handler = async (request) => {
      if (request.lastUserText.endsWith(' m0')) await allSent.opened;
      return { text: `echo: ${request.lastUserText}` };
    };
    const posts: Promise<unknown>[] = [];
    for (let s = 0; s < sessions; s++) {
      posts.push(
        (async () => {
          for (let m = 0; m < perSession; m++) {
            const response = await stack.post('/v1/messages', { chat_id: `mp-${s}`, user_id: 'u', text: `s${s} m${m}` });
            expect(response.status).toBe(202);
          }
        })(),
      );
    }
    await Promise.all(posts);
    await waitFor(async () => fake.requests.length >= sessions, { what: 'a model call in flight for every session' });
    allSent.open();
    await waitFor(
      async () => {
        const open = await sql<{ count: string }>`SELECT count(*) FROM inbound_events WHERE status <> 'done'`.execute(stack.database.db);
        return Number(open.rows[0]?.count) === 0;
      },
      { timeoutMs: 40_000, what: 'all events done' },
    );
    const rows = await sql<{ session_id: string; role: string; content: string; seq: number }>`
      SELECT session_id, role, content, seq FROM messages ORDER BY session_id, seq`.execute(stack.database.db);
    const bySession = new Map<string, { role: string; content: string }[]>();
    for (const row of rows.rows) {
      const list = bySession.get(row.session_id) ?? [];
      list.push(row);
      bySession.set(row.session_id, list);
    }
    expect(bySession.size).toBe(sessions);
    for (const list of bySession.values()) {
      // user, assistant, user, assistant...: one answer per message, in arrival order.
      expect(list.map((m) => m.role)).toEqual(Array.from({ length: perSession * 2 }, (_, i) => (i % 2 === 0 ? 'user' : 'assistant')));
      for (let i = 0; i < list.length; i += 2) expect(list[i + 1]?.content).toBe(`echo: ${list[i]?.content}`);
    }
    // Never two model requests in flight for one session, counted for every session.
    expect(fake.maxConcurrentPerKey).toEqual(new Map([...bySession.keys()].map((sessionId) => [sessionId, 1])));
    const owners = await sql<{ worker: string }>`SELECT DISTINCT worker FROM turns`.execute(stack.database.db);
    const pids = new Set(owners.rows.map((r) => r.worker.split(':')[1]));
    expect(pids).toEqual(new Set(workers.map((w) => String(w.child.pid))));
  });

  it('exits 0 on SIGTERM', async () => {
    expect(await stopProcess(workers[0]!, 'SIGTERM')).toBe(0);
  });
});
