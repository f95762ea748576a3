import { Kysely, PostgresDialect } from 'kysely';
import type { Transaction } from 'kysely';
import type pg from 'pg';
import type { Database } from '@herald/db';

/**
 * Runs `work` in one transaction on one connection, offered both ways: as the pg client (COPY for
 * the message rows) and as a Kysely transaction (the stores' own writes). So a home is imported all
 * or nothing: the history, memory, skills and cron jobs commit together or not at all.
 */
export async function withSingleClient<T>(pool: pg.Pool, work: (client: pg.PoolClient, trx: Transaction<Database>) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // Kysely releases its connection after the transaction; the client stays ours until the end.
  const lent = { query: client.query.bind(client), release: () => undefined };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => lent, end: async () => undefined } as never }) });
  try {
    return await db.transaction().execute((trx) => work(client, trx));
  } finally {
    await db.destroy();
    client.release();
  }
}
