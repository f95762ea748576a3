import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** One outbox row's state, found by its idempotency key. */
export interface KeyedDelivery {
  idempotencyKey: string;
  status: string;
  attempts: number;
  receipt: unknown;
  lastError: string | null;
  deliveredAt: Date | null;
}

/**
 * The outbox rows whose idempotency key starts with one of `prefixes`, oldest first: how a caller
 * that keyed its deliveries (a cron run's `cron:<run_id>:`) reads their receipts back.
 */
export async function deliveriesByKeyPrefix(db: Kysely<Database> | Transaction<Database>, prefixes: readonly string[]): Promise<KeyedDelivery[]> {
  if (prefixes.length === 0) return [];
  const patterns = prefixes.map((prefix) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  const rows = await sql<{
    idempotency_key: string;
    status: string;
    attempts: number;
    receipt: unknown;
    last_error: string | null;
    delivered_at: Date | null;
  }>`SELECT idempotency_key, status, attempts, receipt, last_error, delivered_at FROM outbox
      WHERE idempotency_key LIKE ANY (${patterns}::text[])
      ORDER BY created_at, idempotency_key`.execute(db);
  return rows.rows.map((row) => ({
    idempotencyKey: row.idempotency_key,
    status: row.status,
    attempts: row.attempts,
    receipt: row.receipt,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
  }));
}
