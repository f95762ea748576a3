import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

export function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Stores bytes under their SHA-256 and returns it. Content-addressed: the second store of the same
 * bytes (a redelivered update, two workers racing) writes nothing.
 */
export async function putBlob(db: Executor, bytes: Buffer, mime: string): Promise<string> {
  const sha256 = sha256Of(bytes);
  await db
    .insertInto('blobs')
    .values({ sha256, mime, size_bytes: String(bytes.length), data: bytes })
    // The bytes are never rewritten; the time is, so a blob reused now is not pruned as an old orphan.
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ created_at: sql`now()` }))
    .execute();
  return sha256;
}

/** Blobs younger than this are kept though nothing points at them: their message may be committing. */
export const BLOB_GRACE_MS = 24 * 3_600_000;

/**
 * Deletes the bytes no message and no outbox row points at any more (their message was deleted,
 * their file sent and pruned), past the grace period; returns how many went.
 */
export async function pruneBlobs(db: Kysely<Database>, graceMs: number = BLOB_GRACE_MS): Promise<number> {
  const result = await sql`
    DELETE FROM blobs b
    WHERE b.created_at < now() - ${graceMs} * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM event_attachments a WHERE a.sha256 = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.file ->> 'sha256' = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.attachments @> jsonb_build_array(jsonb_build_object('sha256', b.sha256)))
      AND NOT EXISTS (SELECT 1 FROM cron_runs r WHERE r.files @> jsonb_build_array(jsonb_build_object('sha256', b.sha256)))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export async function hasBlob(db: Executor, sha256: string): Promise<boolean> {
  return (await db.selectFrom('blobs').select('sha256').where('sha256', '=', sha256).executeTakeFirst()) !== undefined;
}

/** The bytes of a blob, or undefined when it is gone (pruned with its last message). */
export async function readBlob(db: Executor, sha256: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('blobs').select('data').where('sha256', '=', sha256).executeTakeFirst();
  return row?.data;
}

export async function readTranscript(db: Executor, sha256: string): Promise<string | null> {
  const row = await db.selectFrom('blobs').select('transcript').where('sha256', '=', sha256).executeTakeFirst();
  return row?.transcript ?? null;
}

export async function saveTranscript(db: Executor, sha256: string, transcript: string): Promise<void> {
  await db.updateTable('blobs').set({ transcript }).where('sha256', '=', sha256).execute();
}
