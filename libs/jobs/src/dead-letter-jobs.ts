import { isUuid } from '@herald/core';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { JOBS_SCHEMA } from './boss-db.ts';

/** What a failed job's last run failed with: pg-boss keeps the thrown error as the job's output, and copies it to the dead letter. */
export function jobFailureMessage(output: unknown): string {
  const value = output as { message?: unknown; value?: { message?: unknown } } | null;
  const message = value?.message ?? value?.value?.message;
  return typeof message === 'string' ? message.slice(0, 500) : 'no error recorded';
}

export interface DeadLetterJob {
  id: string;
  queue: string;
  data: unknown;
  reason: string;
  /** pg-boss's state of the dead letter itself: `completed` once its queue's handler recorded the failure. */
  state: string;
  createdAt: Date;
}

/** The jobs in the named dead-letter queues, newest first, until pg-boss's retention removes them. */
export async function listDeadLetterJobs(db: Kysely<Database>, queues: readonly string[], limit: number): Promise<DeadLetterJob[]> {
  if (queues.length === 0) return [];
  const { rows } = await sql<{ id: string; name: string; data: unknown; output: unknown; state: string; created_on: Date }>`
    SELECT id, name, data, output, state::text AS state, created_on
      FROM ${sql.table(`${JOBS_SCHEMA}.job`)}
     WHERE name IN (${sql.join(queues)})
     ORDER BY created_on DESC
     LIMIT ${limit}`.execute(db);
  return rows.map((row) => ({ id: row.id, queue: row.name, data: row.data, reason: jobFailureMessage(row.output), state: row.state, createdAt: row.created_on }));
}

/** Deletes one dead letter of the named queues; false when there is no such job there. */
export async function discardDeadLetterJob(db: Kysely<Database>, queues: readonly string[], id: string): Promise<boolean> {
  if (!isUuid(id) || queues.length === 0) return false;
  const { numAffectedRows } = await sql`DELETE FROM ${sql.table(`${JOBS_SCHEMA}.job`)} WHERE id = ${id}::uuid AND name IN (${sql.join(queues)})`.execute(db);
  return Number(numAffectedRows ?? 0) > 0;
}
