import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';

// Every model call's record looks up whom it counts for: the first event of its turn
// (herald_record_model_call). The 30-minute soak of 2026-12-06 saw that lookup read 3 pages per call
// at first and 5,660 after 25 minutes: with (turn_id) alone the planner walked every event in time
// order. Migration 0090 puts the order in the turn's index, so the rows it reads do not grow with
// the table.

const SESSION = '00000000-0000-0000-0000-000000000001';
const TURN = '00000000-0000-0000-0000-00000000000a';

/** Rows of inbound_events this transaction has read so far (index fetches and sequential reads). */
async function eventRowsRead(db: TestDatabase['db']): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n FROM pg_stat_xact_user_tables WHERE relname = 'inbound_events'`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

describe("a model call's record", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const db = database.db;
    await sql`INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id) VALUES (${SESSION}, 'main', 'k', 'api', 'dm', 'c')`.execute(db);
    // 20,000 earlier events, each taken by a turn of its own, then the running turn's two.
    await sql`INSERT INTO inbound_events (id, session_id, platform, user_id, text, status, turn_id, received_at)
      SELECT gen_random_uuid(), ${SESSION}::uuid, 'api', 'api:u' || (n % 50), 'earlier', 'done',
             ('00000000-0000-0000-0001-' || lpad(n::text, 12, '0'))::uuid, now() - interval '1 day' + n * interval '1 second'
      FROM generate_series(1, 20000) n`.execute(db);
    await sql`INSERT INTO inbound_events (id, session_id, platform, user_id, text, status, turn_id, received_at)
      VALUES (gen_random_uuid(), ${SESSION}, 'api', 'api:first', 'one', 'processing', ${TURN}, now()),
             (gen_random_uuid(), ${SESSION}, 'api', 'api:second', 'two', 'processing', ${TURN}, now() + interval '1 second')`.execute(db);
    await sql`INSERT INTO turns (id, session_id, worker) VALUES (${TURN}, ${SESSION}, 'w')`.execute(db);
    // Statistics as they stand while the table grows between autovacuum's analyses (here: none
    // yet), which is where the planner took the time-ordered walk in the soak.
  });
  afterAll(() => database.drop());

  it("counts for the turn's first author, reading that turn's events only", async () => {
    const read = await database.db.transaction().execute(async (trx) => {
      const before = await eventRowsRead(trx);
      await sql`SELECT herald_record_model_call(${SESSION}::uuid, ${TURN}::uuid, ${JSON.stringify({ kind: 'turn', provider: 'openai', model: 'm', input_tokens: 10, output_tokens: 2, cached_input_tokens: 0, cache_write_tokens: 0, latency_ms: 5, finish_reason: 'stop' })}::jsonb)`.execute(
        trx,
      );
      return (await eventRowsRead(trx)) - before;
    });
    const call = await database.db.selectFrom('model_calls').select('user_id').where('turn_id', '=', TURN).executeTakeFirstOrThrow();
    expect(call.user_id).toBe('api:first');
    expect(read).toBeLessThan(10);
  });
});
