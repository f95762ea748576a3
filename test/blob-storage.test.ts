import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOB_GRACE_MS, blobStore, pruneBlobs, putBlob, readBlob, s3Client, S3BlobStore, sha256Of, useBlobStorage } from '@herald/attachments';
import { blobLocation, parseBlobUrl } from '@herald/core';
import type { S3BlobLocation } from '@herald/core';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startS3 } from './support/s3-server.ts';
import type { TestS3 } from './support/s3-server.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 36 point 1: blob bytes in an S3-compatible bucket when HERALD_BLOB_URL is set (s3rver here,
// the official client pointed at it). This file's process chooses the S3 store: the env is set
// before the first blob is stored, as a deployment sets it before the process starts.

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

describe('HERALD_BLOB_URL', () => {
  it('takes s3://bucket/prefix with endpoint, region and path style, and refuses what it cannot use', () => {
    expect(parseBlobUrl('s3://my-bucket/herald/blobs/?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&force_path_style=true')).toEqual({
      bucket: 'my-bucket',
      prefix: 'herald/blobs',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    expect(parseBlobUrl('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '', endpoint: null, region: 'us-east-1', forcePathStyle: false });
    expect(parseBlobUrl('https://my-bucket/x')).toMatch(/s3:\/\//);
    expect(parseBlobUrl('s3://key:secret@my-bucket/x')).toMatch(/AWS_ACCESS_KEY_ID/);
    expect(parseBlobUrl('s3://my-bucket/x?acl=public-read')).toMatch(/unknown parameter acl/);
    expect(parseBlobUrl('s3://my-bucket/x?endpoint=file:///etc')).toMatch(/endpoint/);
    expect(parseBlobUrl('s3://my-bucket/a/..%2Fb')).toMatch(/\.\./);
    expect(parseBlobUrl('s3://UPPER_case/x')).toMatch(/bucket name/);
    expect(blobLocation(undefined)).toBeNull();
  });
});

describe('blobs in an S3-compatible bucket (issue 36)', () => {
  let s3: TestS3;
  let llm: FakeLLM;
  let stack: Stack;
  let location: S3BlobLocation;
  beforeAll(async () => {
    s3 = await startS3();
    Object.assign(process.env, s3.env);
    const parsed = parseBlobUrl(s3.env.HERALD_BLOB_URL);
    if (typeof parsed === 'string') throw new Error(parsed);
    location = parsed;
    // This test process runs the ingress in process: it chooses its store as the CLI does at start.
    useBlobStorage(location);
    llm = await startFakeOpenAI();
    stack = await startStack({ model: llm, workers: 0, workerProcesses: true, env: { ...s3.env, HERALD_MODEL_VISION: 'on' } });
  }, 60_000);
  afterAll(async () => {
    await stack.stop();
    await s3.close();
  });

  const objectBytes = async (sha256: string) => {
    const object = await (await s3Client(location)).send(new GetObjectCommand({ Bucket: s3.bucket, Key: `herald/blobs/${sha256}` }));
    return Buffer.from(await (object.Body?.transformToByteArray() ?? new Uint8Array()));
  };
  const puts = () => s3.requests.filter((request) => request.startsWith('PUT /herald-test/herald/blobs/')).length;

  it('is the store this process chose from HERALD_BLOB_URL', () => {
    expect(blobStore()).toBeInstanceOf(S3BlobStore);
  });

  it('puts the bytes in the bucket under their sha256 and the metadata in Postgres; the same bytes again write nothing', async () => {
    const db = stack.database.db;
    const bytes = Buffer.from('service,errors\napi,12\n');
    const before = puts();
    const sha256 = await putBlob(db, bytes, 'text/csv');
    expect(sha256).toBe(sha256Of(bytes));
    expect(await objectBytes(sha256)).toEqual(bytes);
    const row = await db.selectFrom('blobs').selectAll().where('sha256', '=', sha256).executeTakeFirstOrThrow();
    expect([row.mime, row.size_bytes, row.data]).toEqual(['text/csv', String(bytes.length), null]);
    expect(await putBlob(db, bytes, 'text/csv')).toBe(sha256);
    await Promise.all([putBlob(db, bytes, 'text/csv'), putBlob(db, bytes, 'text/csv')]);
    expect(puts() - before).toBe(1);
    expect(await readBlob(db, sha256)).toEqual(bytes);
  });

  it('gives a worker process the image the ingress stored in the bucket', async () => {
    const worker = await stack.startProcess('worker', s3.env);
    const seen: string[] = [];
    llm.handler = (request: FakeRequest) => {
      const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
      for (const message of messages) {
        if (message.role === 'user' && Array.isArray(message.content)) {
          for (const part of message.content as { type: string; image_url?: { url: string } }[]) if (part.type === 'image_url') seen.push(part.image_url?.url ?? '');
        }
      }
      return { text: `saw ${seen.length}` };
    };
    const response = await stack.post('/v1/messages?wait=30', { chat_id: 's3-chat', user_id: 'u1', text: 'look', attachments: [{ name: 'dot.png', data: PNG.toString('base64') }] });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toBe('saw 1');
    expect(seen).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
    expect(await objectBytes(sha256Of(PNG))).toEqual(PNG);
    const row = await stack.database.db.selectFrom('blobs').select('data').where('sha256', '=', sha256Of(PNG)).executeTakeFirstOrThrow();
    expect(row.data).toBeNull();
    worker.child.kill();
    await worker.exited;
  }, 60_000);

  it('prunes an orphan: the row and the object go, what a message points at stays', async () => {
    const db = stack.database.db;
    const orphan = Buffer.from('nobody refers to me');
    const sha256 = await putBlob(db, orphan, 'text/plain');
    await db
      .updateTable('blobs')
      .set({ created_at: new Date(Date.now() - 2 * BLOB_GRACE_MS) })
      .execute();
    const orphans = await db.selectFrom('blobs as b').select('b.sha256').where('b.sha256', '!=', sha256Of(PNG)).execute();
    expect(await pruneBlobs(db)).toBe(orphans.length);
    expect(await readBlob(db, sha256)).toBeUndefined();
    await expect((await s3Client(location)).send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `herald/blobs/${sha256}` }))).rejects.toThrow();
    expect(await readBlob(db, sha256Of(PNG))).toEqual(PNG);
  });
});
