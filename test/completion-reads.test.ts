import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';

// The completion event after every turn asks whether the turn's tool results include a saved
// memory or a changed skill (herald_record_completion). The soak of 2026-12-06 saw that read grow
// with the session: with only (session_id, seq) to go by, it filtered every message of the
// session. Migration 0089 indexes those two tools' results, so the rows it reads are the turn's own.

const SESSION = '00000000-0000-0000-0000-000000000001';
const TURN = '00000000-0000-0000-0000-00000000000a';

/** Rows of messages this transaction has read so far (index fetches and sequential reads). */
async function messageRowsRead(db: TestDatabase['db']): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n FROM pg_stat_xact_user_tables WHERE relname = 'messages'`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

describe("the completion's check of a turn's tool results", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const db = database.db;
    await sql`INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id) VALUES (${SESSION}, 'main', 'k', 'api', 'dm', 'c')`.execute(db);
    // A long session: 4,000 messages of earlier turns, tool results among them, then this turn's.
    await sql`INSERT INTO messages (session_id, seq, role, content, tool_name, turn_id)
      SELECT ${SESSION}::uuid, n, CASE WHEN n % 3 = 0 THEN 'tool' ELSE 'user' END, 'earlier ' || n,
             CASE WHEN n % 3 = 0 THEN 'todo' END, ('00000000-0000-0000-0001-' || lpad((n / 4)::text, 12, '0'))::uuid
      FROM generate_series(1, 4000) n`.execute(db);
    await sql`INSERT INTO messages (session_id, seq, role, content, tool_name, turn_id)
      VALUES (${SESSION}, 4001, 'tool', '{"success": true}', 'memory', ${TURN})`.execute(db);
    await sql`ANALYZE messages`.execute(db);
  });
  afterAll(() => database.drop());

  it("reads the turn's own results, not the session's every message", async () => {
    const read = await database.db.transaction().execute(async (trx) => {
      const before = await messageRowsRead(trx);
      const { rows } = await sql<{ kinds: string[] }>`
        SELECT kinds FROM herald_record_completion(${TURN}::uuid, ${SESSION}::uuid, 'main', 'api:u', 1, 1, false, false, false, NULL)`.execute(trx);
      expect(rows).toHaveLength(1);
      return (await messageRowsRead(trx)) - before;
    });
    expect(read).toBeLessThan(10);
  });
});
