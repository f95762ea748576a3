import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

export type Executor = Kysely<Database> | Transaction<Database>;

export function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The row for bytes just stored; its time is renewed, so a blob reused now is not pruned as an old orphan. */
export async function upsertBlobRow(db: Executor, sha256: string, bytes: Buffer, mime: string, data: Buffer | null): Promise<void> {
  await db
    .insertInto('blobs')
    .values({ sha256, mime, size_bytes: String(bytes.length), data })
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ created_at: sql`now()` }))
    .execute();
}

/** The condition of a blob row nothing points at, past the grace period (alias b). */
export function orphanCondition(graceMs: number) {
  return sql`b.created_at < now() - ${graceMs} * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM event_attachments a WHERE a.sha256 = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.file ->> 'sha256' = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.attachments @> jsonb_build_array(jsonb_build_object('sha256', b.sha256)))
      AND NOT EXISTS (SELECT 1 FROM cron_runs r WHERE r.files @> jsonb_build_array(jsonb_build_object('sha256', b.sha256)))`;
}

/**
 * Runs `work` holding a lock on one blob for the rest of the transaction (the caller's, or a new
 * one), so storing bytes again and the sweep deleting them cannot interleave: without it the sweep
 * could delete the object just after a store found it present and renewed the row.
 */
export async function withBlobLock<T>(db: Executor, sha256: string, work: (tx: Executor) => Promise<T>): Promise<T> {
  const locked = async (tx: Executor): Promise<T> => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`herald-blob:${sha256}`}, 0))`.execute(tx);
    return work(tx);
  };
  return db.isTransaction ? locked(db) : (db as Kysely<Database>).transaction().execute(locked);
}

/** Where blob bytes live: the blobs row itself, or a bucket beside it (the row keeps the metadata). */
export interface BlobStore {
  /** Stores bytes under their SHA-256 and returns it; the same bytes again write nothing twice. */
  put(db: Executor, bytes: Buffer, mime: string): Promise<string>;
  /** The bytes, or undefined when they are gone (pruned with their last message). */
  read(db: Executor, sha256: string): Promise<Buffer | undefined>;
  /** Deletes the bytes nothing points at any more, past the grace period; returns how many went. */
  prune(db: Kysely<Database>, graceMs: number): Promise<number>;
}
