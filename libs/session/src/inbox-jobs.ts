import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** The inbox's events, newest first, as the admin view lists a Postgres-side queue's jobs; `status` narrows it to one state. */
export async function listInboxJobs(db: Kysely<Database>, status: string | undefined, limit: number): Promise<Record<string, unknown>[]> {
  const where = status === undefined ? sql`` : sql`WHERE status = ${status}`;
  const { rows } = await sql<
    Record<string, unknown>
  >`SELECT id, session_id, platform, status, received_at AS created_at, error AS last_error FROM inbound_events ${where} ORDER BY received_at DESC LIMIT ${limit}`.execute(db);
  return rows;
}
