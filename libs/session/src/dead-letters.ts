import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { redactSecrets, storable, storableValue } from '@herald/core';
import type { Database, DeadLetterSource } from '@herald/db';

/** The longest reason kept: enough for the error's first lines, never a whole payload. */
const MAX_REASON_CHARS = 500;

/**
 * What a failure is, for comparing one with the next: the error's class and message, secrets
 * redacted (a Bot API URL holds the token), ids of rows and numbers left as they are.
 */
export function failureReason(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : `thrown: ${String(error)}`;
  return redactSecrets(text).slice(0, MAX_REASON_CHARS);
}

export interface FailureRecord {
  source: DeadLetterSource;
  /** What the source retries by: `telegram:<bot>:<update_id>`, the turn id of a run. */
  key: string;
  reason: string;
  sessionId?: string | undefined;
  payload?: unknown;
}

export interface FailureStrike {
  /** Failed twice the same way (or `final` was set): skip it from now on. */
  dead: boolean;
  failures: number;
}

/**
 * Counts one failure of a piece of work. The second failure with the same reason makes it a dead
 * letter; a different reason starts the count again (a storage blip then a bug are not "the same
 * way twice"). `final` makes it dead at once, for a caller that stops retrying anyway.
 */
export async function recordFailure(db: Kysely<Database>, failure: FailureRecord, final = false): Promise<FailureStrike> {
  // The payload is what failed: it may hold exactly the characters Postgres refuses.
  const payload = failure.payload === undefined ? null : JSON.stringify(storableValue(failure.payload));
  const reasonText = storable(failure.reason);
  const { rows } = await sql<{ status: string; failures: number }>`
    INSERT INTO dead_letters (source, key, reason, session_id, payload, status)
    VALUES (${failure.source}, ${storable(failure.key)}, ${reasonText}, ${failure.sessionId ?? null}::uuid, ${payload}::jsonb,
            CASE WHEN ${final} THEN 'dead' ELSE 'failing' END)
    ON CONFLICT (source, key) DO UPDATE SET
      failures = CASE WHEN dead_letters.reason = EXCLUDED.reason THEN dead_letters.failures + 1 ELSE 1 END,
      status = CASE WHEN dead_letters.status = 'dead' OR dead_letters.reason = EXCLUDED.reason OR ${final} THEN 'dead' ELSE 'failing' END,
      reason = EXCLUDED.reason,
      payload = coalesce(EXCLUDED.payload, dead_letters.payload),
      last_failed_at = now()
    RETURNING status, failures`.execute(db);
  const row = rows[0];
  return { dead: row?.status === 'dead', failures: row?.failures ?? 1 };
}

/** True when this piece of work is a dead letter: intake and workers skip it. */
export async function isDeadLetter(db: Kysely<Database>, source: DeadLetterSource, key: string): Promise<boolean> {
  const row = await db.selectFrom('dead_letters').select('id').where('source', '=', source).where('key', '=', key).where('status', '=', 'dead').executeTakeFirst();
  return row !== undefined;
}

export interface DeadLetterView {
  kind: string;
  id: string;
  reason: string;
  failures: number;
  sessionId: string | null;
  failedAt: Date;
}

/** Every dead letter, newest first (herald_dead_letters: updates, runs, deliveries, reviews, cron jobs). */
export async function listDeadLetters(db: Kysely<Database>, limit = 100): Promise<DeadLetterView[]> {
  const { rows } = await sql<{ kind: string; id: string; reason: string; failures: number; session_id: string | null; failed_at: Date }>`
    SELECT * FROM herald_dead_letters(${limit}::integer)`.execute(db);
  return rows.map((row) => ({ kind: row.kind, id: row.id, reason: row.reason, failures: row.failures, sessionId: row.session_id, failedAt: row.failed_at }));
}

/** How many dead letters of each kind there are (GET /v1/admin/status). */
export async function countDeadLetters(db: Kysely<Database>): Promise<Record<string, number>> {
  const { rows } = await sql<{ kind: string; n: string }>`
    SELECT kind, count(*) AS n FROM herald_dead_letters(2147483647) GROUP BY kind`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.kind, Number(row.n)]));
}
