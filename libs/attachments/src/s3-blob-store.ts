import type * as S3SdkModule from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { S3BlobLocation } from '@herald/core';
import type { Database } from '@herald/db';
import { orphanCondition, sha256Of, upsertBlobRow, withBlobLock } from './blob-rows.ts';
import type { BlobStore, Executor } from './blob-rows.ts';

/** How many orphans one sweep deletes at most; the next sweep takes the rest. */
const PRUNE_BATCH = 500;

/**
 * The SDK loads with the first S3 call, not with every process that imports this library (most
 * deployments keep bytes in Postgres); it stays outside the CLI bundle (scripts/bundle.mjs).
 */
type S3Sdk = typeof S3SdkModule;
let loading: Promise<S3Sdk> | undefined;
function sdk(): Promise<S3Sdk> {
  loading ??= import('@aws-sdk/client-s3');
  return loading;
}

export async function s3Client(location: S3BlobLocation): Promise<S3Client> {
  const { S3Client } = await sdk();
  return new S3Client({
    region: location.region,
    forcePathStyle: location.forcePathStyle,
    ...(location.endpoint === null ? {} : { endpoint: location.endpoint }),
    // Checksums only where S3 requires them: many S3-compatible servers reject the SDK's default
    // CRC32 trailers, and the key already is the SHA-256 of the bytes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

/**
 * Bytes in an S3-compatible bucket under <prefix>/<sha256>, the row in Postgres with data NULL.
 * An object is written before its row exists and deleted in the same locked transaction that
 * deletes the row, so a row always has its object.
 */
export class S3BlobStore implements BlobStore {
  #client: Promise<S3Client> | undefined;
  readonly #location: S3BlobLocation;

  constructor(location: S3BlobLocation) {
    this.#location = location;
  }

  #s3(): Promise<S3Client> {
    this.#client ??= s3Client(this.#location);
    return this.#client;
  }

  keyOf(sha256: string): string {
    return this.#location.prefix === '' ? sha256 : `${this.#location.prefix}/${sha256}`;
  }

  async put(db: Executor, bytes: Buffer, mime: string): Promise<string> {
    const sha256 = sha256Of(bytes);
    await withBlobLock(db, sha256, async (tx) => {
      if (!(await this.#exists(sha256))) {
        const { PutObjectCommand } = await sdk();
        await (await this.#s3()).send(new PutObjectCommand({ Bucket: this.#location.bucket, Key: this.keyOf(sha256), Body: bytes, ContentType: mime }));
      }
      await upsertBlobRow(tx, sha256, bytes, mime, null);
    });
    return sha256;
  }

  async read(db: Executor, sha256: string): Promise<Buffer | undefined> {
    const row = await db.selectFrom('blobs').select('data').where('sha256', '=', sha256).executeTakeFirst();
    if (row === undefined) return undefined;
    // A row stored before the switch to a bucket still has its bytes.
    if (row.data !== null) return row.data;
    try {
      const { GetObjectCommand } = await sdk();
      const object = await (await this.#s3()).send(new GetObjectCommand({ Bucket: this.#location.bucket, Key: this.keyOf(sha256) }));
      return object.Body === undefined ? undefined : Buffer.from(await object.Body.transformToByteArray());
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async prune(db: Kysely<Database>, graceMs: number): Promise<number> {
    const candidates = await sql<{ sha256: string }>`SELECT b.sha256 FROM blobs b WHERE ${orphanCondition(graceMs)} LIMIT ${PRUNE_BATCH}`.execute(db);
    let removed = 0;
    for (const { sha256 } of candidates.rows) {
      // Checked again under the lock: the bytes may have been stored again since.
      const gone = await withBlobLock(db, sha256, async (tx) => {
        const deleted = await sql`DELETE FROM blobs b WHERE b.sha256 = ${sha256} AND ${orphanCondition(graceMs)}`.execute(tx);
        if (Number(deleted.numAffectedRows ?? 0) === 0) return false;
        const { DeleteObjectCommand } = await sdk();
        await (await this.#s3()).send(new DeleteObjectCommand({ Bucket: this.#location.bucket, Key: this.keyOf(sha256) }));
        return true;
      });
      if (gone) removed++;
    }
    return removed;
  }

  async #exists(sha256: string): Promise<boolean> {
    try {
      const { HeadObjectCommand } = await sdk();
      await (await this.#s3()).send(new HeadObjectCommand({ Bucket: this.#location.bucket, Key: this.keyOf(sha256) }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }
}
