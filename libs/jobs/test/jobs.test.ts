import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { silentLogger } from '@herald/core';
import { JobRuntime, prepareJobs, sendJob } from '@herald/jobs';
import type { Job, QueueSpec } from '@herald/jobs';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import type { TestDatabase } from '../../../test/support/test-database.ts';
import { waitFor } from '../../../test/support/stack.ts';

const DEAD: QueueSpec = { name: 'probe-dead-letter', retryLimit: 0, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 60, retentionMinutes: 60 };
const PROBE: QueueSpec = { name: 'probe', retryLimit: 1, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 60, retentionMinutes: 60, deadLetter: DEAD.name };

async function jobsIn(database: TestDatabase, queue: string): Promise<{ id: string; state: string; data: any }[]> {
  const rows = await sql<{ id: string; state: string; data: any }>`SELECT id, state::text AS state, data FROM pgboss.job WHERE name = ${queue} ORDER BY created_on`.execute(database.db);
  return rows.rows;
}

describe('pg-boss jobs on Herald’s database', () => {
  let database: TestDatabase;
  let runtime: JobRuntime;
  beforeAll(async () => {
    database = await createTestDatabase();
    await prepareJobs(database.db, [PROBE, DEAD]);
    runtime = new JobRuntime({ db: database.db, logger: silentLogger, queues: [PROBE, DEAD], maintenanceIntervalSeconds: 1 });
    await runtime.start();
  });
  afterAll(async () => {
    await runtime.stop(1000);
    await database.drop();
  });

  it('a job sent in a transaction exists only if the transaction commits, and its id makes a second send a no-op', async () => {
    const id = randomUUID();
    await database.db
      .transaction()
      .execute(async (trx) => {
        expect(await sendJob(trx, PROBE.name, { n: 0 }, { id })).toBe(true);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await jobsIn(database, PROBE.name)).toEqual([]);
    await database.db.transaction().execute(async (trx) => {
      expect(await sendJob(trx, PROBE.name, { n: 1 }, { id, startAfter: new Date(Date.now() + 3_600_000) })).toBe(true);
    });
    expect(await sendJob(database.db, PROBE.name, { n: 2 }, { id })).toBe(false);
    expect((await jobsIn(database, PROBE.name)).map((job) => job.data)).toEqual([{ n: 1 }]);
    await expect(sendJob(database.db, 'no-such-queue', {})).rejects.toThrow(/job queue 'no-such-queue' does not exist/);
    await sql`DELETE FROM pgboss.job WHERE name = ${PROBE.name}`.execute(database.db);
  });

  it('completes a job whose handler returns, retries one that throws, then dead-letters it', async () => {
    const seen: { data: any; retryCount: number }[] = [];
    const consumer = runtime.consume<{ ok: boolean }>(PROBE.name, { concurrency: 2, pollMs: 50 }, async (job: Job<{ ok: boolean }>) => {
      seen.push({ data: job.data, retryCount: job.retryCount });
      if (!job.data.ok) throw new Error('handler refused');
    });
    const good = randomUUID();
    const bad = randomUUID();
    await sendJob(database.db, PROBE.name, { ok: true }, { id: good });
    await sendJob(database.db, PROBE.name, { ok: false }, { id: bad });
    consumer.nudge();
    await waitFor(
      async () => {
        const jobs = await jobsIn(database, PROBE.name);
        return jobs.find((job) => job.id === good)?.state === 'completed' && jobs.find((job) => job.id === bad)?.state === 'failed';
      },
      { what: 'one job completed, one failed' },
    );
    expect(seen.filter((run) => !run.data.ok).map((run) => run.retryCount)).toEqual([0, 1]);
    const dead = await jobsIn(database, DEAD.name);
    expect(dead.map((job) => job.data)).toEqual([{ ok: false }]);
    await consumer.stop(1000);
  });

  it('expires a run whose consumer died and runs it again elsewhere', async () => {
    const id = randomUUID();
    await sql`UPDATE pgboss.queue SET expire_seconds = 1 WHERE name = ${PROBE.name}`.execute(database.db);
    await sendJob(database.db, PROBE.name, { ok: true }, { id });
    // A consumer takes the job and dies without settling it.
    const boss = await sql`UPDATE pgboss.job SET state = 'active', started_on = now() WHERE id = ${id} RETURNING id`.execute(database.db);
    expect(boss.rows).toHaveLength(1);
    const retried: number[] = [];
    const consumer = runtime.consume<{ ok: boolean }>(PROBE.name, { concurrency: 1, pollMs: 50 }, async (job) => {
      if (job.id === id) retried.push(job.retryCount);
    });
    await waitFor(async () => (await jobsIn(database, PROBE.name)).find((job) => job.id === id)?.state === 'completed', {
      timeoutMs: 30_000,
      what: 'the expired job run again',
    });
    expect(retried).toEqual([1]);
    await consumer.stop(1000);
  });
});
