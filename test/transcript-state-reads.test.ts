import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { loadTranscriptState } from '@herald/transcript';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';

// What the soak of 2026-12-06 found in the read at the start of every turn: the last turn call's
// size was looked up by `ORDER BY id DESC LIMIT 1`, which the planner served by walking the
// primary key of model_calls backwards through every session's calls, so a session with no call
// yet (a chat's first turn, every subagent, every cron run) read the whole table. The rows it reads
// must not depend on how many calls other sessions have made.

const sessionId = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/** Rows of model_calls this transaction has read so far (index fetches and sequential reads). */
async function modelCallRowsRead(db: TestDatabase['db']): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n FROM pg_stat_xact_user_tables WHERE relname = 'model_calls'`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await sql`INSERT INTO profiles (id, display_name) VALUES ('p', 'p') ON CONFLICT DO NOTHING`.execute(database.db);
  await sql`INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id)
    SELECT ('00000000-0000-0000-0000-' || lpad(s::text, 12, '0'))::uuid, 'p', 'k' || s, 'api', 'dm', 'c' || s FROM generate_series(1, 101) s`.execute(database.db);
});
afterAll(() => database.drop());

describe('the transcript read at the start of a turn', () => {
  beforeAll(async () => {
    const db = database.db;
    // 100 sessions' calls, interleaved in time as many chats' turns are; session 101 has none yet.
    await sql`INSERT INTO model_calls (session_id, kind, provider, model, latency_ms, finish_reason, input_tokens, output_tokens)
      SELECT ('00000000-0000-0000-0000-' || lpad(s::text, 12, '0'))::uuid, CASE WHEN n % 5 = 0 THEN 'review' ELSE 'turn' END,
             'openai', 'm', 10, 'stop', 1000 + n, 10
      FROM generate_series(1, 200) n, generate_series(1, 100) s ORDER BY n, s`.execute(db);
    await sql`ANALYZE model_calls`.execute(db);
  });

  it("finds a session's last turn call, or that it has none, without reading other sessions' calls", async () => {
    const read = await database.db.transaction().execute(async (trx) => {
      // Seven times on one connection: the read is a function whose plan the connection keeps, and
      // after five calls Postgres may switch it to a generic plan; that plan must read as few rows.
      for (let i = 0; i < 6; i++) await loadTranscriptState(trx, sessionId(i % 2 === 0 ? 101 : 7));
      const before = await modelCallRowsRead(trx);
      const fresh = await loadTranscriptState(trx, sessionId(101));
      const afterFresh = await modelCallRowsRead(trx);
      const busy = await loadTranscriptState(trx, sessionId(7));
      return { fresh, busy, afterFresh: afterFresh - before, afterBusy: (await modelCallRowsRead(trx)) - afterFresh };
    });
    expect(read.fresh.lastInputTokens).toBeNull();
    // The newest of the session's turn calls (n = 199; n = 200 was a review).
    expect(read.busy.lastInputTokens).toBe(1199);
    // 20,000 calls of other sessions in the table: the old plan read all of them for the new session.
    expect(read.afterFresh).toBeLessThan(10);
    expect(read.afterBusy).toBeLessThan(10);
  });
});

// The same shape in the append every turn makes twice (its user messages, its reply): the next seq
// was max(seq), which the planner answered by aggregating over all of the session's index entries
// whenever the statistics said the session was small (a young table, a session that grew since the
// last ANALYZE), so the append's cost grew with the session.
describe('appending to a session', () => {
  beforeAll(async () => {
    // Statistics taken while the session was new, then 1,000 messages.
    await sql`ANALYZE messages`.execute(database.db);
    await sql`INSERT INTO messages (session_id, seq, role, content) SELECT ${sessionId(1)}::uuid, n, 'user', 'm' || n FROM generate_series(1, 1000) n`.execute(database.db);
  });

  it('reads one index entry for the next seq, however long the session is', async () => {
    const read = await database.db.transaction().execute(async (trx) => {
      await sql`SELECT herald_append_messages(${sessionId(1)}::uuid, NULL, '[{"role": "assistant", "content": "next"}]'::jsonb)`.execute(trx);
      const { rows } = await sql<{ n: string }>`SELECT pg_stat_get_xact_tuples_returned('messages_session_id_seq_key'::regclass) AS n`.execute(trx);
      return Number(rows[0]?.n ?? 0);
    });
    const { rows } = await sql<{ seq: number }>`SELECT seq FROM messages WHERE session_id = ${sessionId(1)}::uuid AND content = 'next'`.execute(database.db);
    expect(rows).toEqual([{ seq: 1001 }]);
    // max(seq) read all 1,000 entries here.
    expect(read).toBeLessThan(10);
  });

  // herald_tool_text feeds two generated columns of every message; it must be inlined into them,
  // not run as a query planned per message (it was not while it called concat_ws, only stable).
  it('computes the search columns without calling herald_tool_text as a function', async () => {
    const calls = await database.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL track_functions = 'all'`.execute(trx);
      const message = [{ role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'terminal', arguments: '{"command":"ls deploy"}' }] }];
      await sql`SELECT herald_append_messages(${sessionId(1)}::uuid, NULL, ${JSON.stringify(message)}::jsonb)`.execute(trx);
      const { rows } = await sql<{ outer: string | null; inner: string | null }>`
        SELECT pg_stat_get_xact_function_calls('herald_tool_text'::regproc) AS outer,
               pg_stat_get_xact_function_calls('herald_tool_calls_text'::regproc) AS inner`.execute(trx);
      return rows[0];
    });
    expect(Number(calls?.outer ?? 0)).toBe(0);
    // The words of the calls are still computed, once per generated column.
    expect(Number(calls?.inner ?? 0)).toBe(2);
    const { rows } = await sql<{ tool_text: string }>`SELECT tool_text FROM messages WHERE session_id = ${sessionId(1)}::uuid AND tool_calls IS NOT NULL`.execute(database.db);
    expect(rows).toEqual([{ tool_text: 'terminal {"command":"ls deploy"}' }]);
  });
});
