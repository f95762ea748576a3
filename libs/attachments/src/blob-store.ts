import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import type { S3BlobLocation } from '@herald/core';
import { orphanCondition, sha256Of, upsertBlobRow } from './blob-rows.ts';
import type { BlobStore, Executor } from './blob-rows.ts';
import { S3BlobStore } from './s3-blob-store.ts';

/**
 * Where blob bytes live. The metadata row is always in Postgres (`blobs`: type, size, transcript,
 * age), so ownership, retention, erasure and pruning are SQL whatever the store; the bytes are in
 * the row (PostgresBlobStore) or in a bucket under their SHA-256 (S3BlobStore).
 */
export type { BlobStore } from './blob-rows.ts';

export { sha256Of } from './blob-rows.ts';
export type { Executor } from './blob-rows.ts';

/** Blobs younger than this are kept though nothing points at them: their message may be committing. */
export const BLOB_GRACE_MS = 24 * 3_600_000;

/** The default: the bytes in the row itself, so a deployment needs nothing but Postgres. */
export class PostgresBlobStore implements BlobStore {
  async put(db: Executor, bytes: Buffer, mime: string): Promise<string> {
    const sha256 = sha256Of(bytes);
    await upsertBlobRow(db, sha256, bytes, mime, bytes);
    return sha256;
  }

  async read(db: Executor, sha256: string): Promise<Buffer | undefined> {
    const row = await db.selectFrom('blobs').select('data').where('sha256', '=', sha256).executeTakeFirst();
    return row?.data ?? undefined;
  }

  async prune(db: Kysely<Database>, graceMs: number): Promise<number> {
    const result = await sql`DELETE FROM blobs b WHERE ${orphanCondition(graceMs)}`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }
}

let chosen: BlobStore | undefined;

/**
 * Chooses the process's store from the config (HERALD_BLOB_URL, checked when the config loaded): the
 * CLI calls it once at start, before any role runs, so every user of the store in every service
 * (intake, send_file, the delivery consumer, the scheduler's sweep) agrees. Postgres until called.
 */
export function useBlobStorage(storage: S3BlobLocation | null): void {
  chosen = storage === null ? new PostgresBlobStore() : new S3BlobStore(storage);
}

export function blobStore(): BlobStore {
  chosen ??= new PostgresBlobStore();
  return chosen;
}

export function putBlob(db: Executor, bytes: Buffer, mime: string): Promise<string> {
  return blobStore().put(db, bytes, mime);
}

export function readBlob(db: Executor, sha256: string): Promise<Buffer | undefined> {
  return blobStore().read(db, sha256);
}

export function pruneBlobs(db: Kysely<Database>, graceMs: number = BLOB_GRACE_MS): Promise<number> {
  return blobStore().prune(db, graceMs);
}

export async function hasBlob(db: Executor, sha256: string): Promise<boolean> {
  return (await db.selectFrom('blobs').select('sha256').where('sha256', '=', sha256).executeTakeFirst()) !== undefined;
}

export async function readTranscript(db: Executor, sha256: string): Promise<string | null> {
  const row = await db.selectFrom('blobs').select('transcript').where('sha256', '=', sha256).executeTakeFirst();
  return row?.transcript ?? null;
}

export async function saveTranscript(db: Executor, sha256: string, transcript: string): Promise<void> {
  await db.updateTable('blobs').set({ transcript }).where('sha256', '=', sha256).execute();
}
