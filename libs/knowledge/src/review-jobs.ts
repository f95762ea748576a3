import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** The background reviews, newest first, as the admin view lists a Postgres-side queue's jobs; `status` narrows it to one state. */
export async function listReviewJobs(db: Kysely<Database>, status: string | undefined, limit: number): Promise<Record<string, unknown>[]> {
  const where = status === undefined ? sql`` : sql`WHERE status = ${status}`;
  const { rows } = await sql<
    Record<string, unknown>
  >`SELECT id, session_id, status, attempts, next_attempt_at, created_at, error AS last_error FROM reviews ${where} ORDER BY created_at DESC LIMIT ${limit}`.execute(db);
  return rows;
}
