import pg from 'pg';

/**
 * The reference pipeline's two tables, in the benchmark's database beside Herald's: an inbound
 * message committed by the ingress and a reply committed by the worker.
 */
export async function createReferenceSchema(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`
      CREATE TABLE IF NOT EXISTS ref_inbound (
        id bigserial PRIMARY KEY,
        chat_id text NOT NULL,
        user_id text NOT NULL,
        text text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at timestamptz
      );
      CREATE TABLE IF NOT EXISTS ref_replies (
        inbound_id bigint PRIMARY KEY REFERENCES ref_inbound(id),
        text text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE TABLE IF NOT EXISTS ref_steps (
        id bigserial PRIMARY KEY,
        inbound_id bigint NOT NULL REFERENCES ref_inbound(id),
        tool_calls jsonb NOT NULL,
        result text NOT NULL
      );
      CREATE TABLE IF NOT EXISTS ref_todos (
        chat_id text PRIMARY KEY,
        items jsonb NOT NULL,
        revision integer NOT NULL
      );`);
  } finally {
    await client.end();
  }
}

/** The Redis channel on which workers announce replies to the ingress processes. */
export const REPLY_CHANNEL = 'ref:replies';
/** The BullMQ queue of the reference pipeline. */
export const REFERENCE_QUEUE = 'ref-turns';
