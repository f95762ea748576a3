import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

/** A real S3-compatible server (s3rver) on loopback, with one bucket, recording each request. */
export interface TestS3 {
  bucket: string;
  /** http://127.0.0.1:<port>, the SDK's endpoint. */
  endpoint: string;
  /** HERALD_BLOB_URL and the AWS credentials s3rver accepts, for a stack's env. */
  env: { HERALD_BLOB_URL: string; AWS_ACCESS_KEY_ID: string; AWS_SECRET_ACCESS_KEY: string };
  /** Every request as "METHOD /bucket/key", in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startS3(prefix = 'herald/blobs'): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'herald-s3-'));
  const bucket = 'herald-test';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = await server.run();
  const requests: string[] = [];
  server.httpServer.on('request', (request: { method?: string; url?: string }) => requests.push(`${request.method ?? ''} ${(request.url ?? '').split('?')[0] ?? ''}`));
  const endpoint = `http://127.0.0.1:${address.port}`;
  const env = {
    HERALD_BLOB_URL: `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&force_path_style=true`,
    // s3rver's fixed credentials.
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  };
  return {
    bucket,
    endpoint,
    env,
    requests,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
