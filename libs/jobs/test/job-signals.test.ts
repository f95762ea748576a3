import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { silentLogger } from '@herald/core';
import { JobRuntime, prepareJobs, sendJob } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import type { TestDatabase } from '../../../test/support/test-database.ts';
import { waitFor } from '../../../test/support/stack.ts';

// The leak the reviewer's heap snapshots of 2026-12-06 showed: a job's signal was AbortSignal.any
// over the consumer's shutdown signal and AbortSignal.timeout(deadline). The model SDKs add an
// 'abort' listener to the signal they are given and never remove it, and Node keeps a composite
// signal with a listener alive until a source aborts: one AbortController kept per review's model
// call for the life of the process. A job's signal must be collectable once its run is over.

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const QUEUE: QueueSpec = { name: 'signal-probe', retryLimit: 0, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 60, retentionMinutes: 60 };
const SHORT: QueueSpec = { name: 'signal-probe-short', retryLimit: 0, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 1, retentionMinutes: 60 };

async function completed(database: TestDatabase, queue: string): Promise<number> {
  const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM pgboss.job WHERE name = ${queue} AND state IN ('completed', 'failed')`.execute(database.db);
  return Number(rows.rows[0]?.n);
}

describe('a job consumer lets go of each run signal', () => {
  let database: TestDatabase;
  let runtime: JobRuntime;
  beforeAll(async () => {
    database = await createTestDatabase();
    await prepareJobs(database.db, [QUEUE, SHORT]);
    runtime = new JobRuntime({ db: database.db, logger: silentLogger, queues: [QUEUE, SHORT], maintenanceIntervalSeconds: 1 });
    await runtime.start();
  });
  afterAll(async () => {
    await runtime.stop(1000);
    await database.drop();
  });

  it('keeps no run signal once its job is settled, though a listener like the SDK one stays on it', async () => {
    const seen: WeakRef<AbortSignal>[] = [];
    const consumer = runtime.consume(QUEUE.name, { concurrency: 2, pollMs: 20 }, async (_job, signal) => {
      // What the OpenAI and Anthropic SDKs do with the signal of every request.
      const controller = new AbortController();
      signal.addEventListener('abort', () => controller.abort());
      seen.push(new WeakRef(signal));
    });
    for (let n = 0; n < 20; n++) await sendJob(database.db, QUEUE.name, { n }, { id: randomUUID() });
    consumer.nudge();
    await waitFor(async () => (await completed(database, QUEUE.name)) === 20 || undefined, { what: '20 jobs settled' });
    expect(seen).toHaveLength(20);
    for (let round = 0; round < 5 && seen.some((ref) => ref.deref() !== undefined); round++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      gc();
    }
    expect(seen.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    await consumer.stop(1000);
  });

  it('still aborts a run at its deadline, with a TimeoutError', async () => {
    const reasons: unknown[] = [];
    const consumer = runtime.consume(SHORT.name, { concurrency: 1, pollMs: 20 }, async (_job, signal) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      reasons.push(signal.reason);
    });
    await sendJob(database.db, SHORT.name, {}, { id: randomUUID() });
    consumer.nudge();
    await waitFor(async () => reasons.length > 0 || undefined, { timeoutMs: 30_000, what: 'the run aborted at its deadline' });
    expect(reasons[0]).toMatchObject({ name: 'TimeoutError' });
    await consumer.stop(1000);
  });
});
