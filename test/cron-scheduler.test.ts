import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createCronJob, cronNow } from '@herald/cron';
import { uniquePrefix } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';
import { useTestDatabase } from './support/use-test-database.ts';
import { PROCESS_START_MS, startHeraldProcess, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess } from './support/stack.ts';

/**
 * The scheduler's clock is the database clock plus cron_clock.offset_ms, read by every replica;
 * moving the offset is how these tests let hours pass in seconds.
 */
async function advanceClock(database: TestDatabase, ms: number): Promise<void> {
  await sql`UPDATE cron_clock SET offset_ms = offset_ms + ${ms}`.execute(database.db);
}

const startScheduler = (env: Record<string, string>) => startHeraldProcess('scheduler', env);

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('cron firing across scheduler replicas', { timeout: 3 * PROCESS_START_MS }, () => {
  const database = useTestDatabase();
  let env: Record<string, string>;
  const processes: HeraldProcess[] = [];

  beforeAll(async () => {
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      HERALD_QUEUE_PREFIX: uniquePrefix(),
      HERALD_SCHEDULER_TICK_MS: '50',
      HERALD_RECONCILE_INTERVAL_MS: '60000',
      HERALD_DB_POOL_SIZE: '3',
    };
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => stopProcess(p, 'SIGKILL')));
  });

  it('two scheduler processes fire every occurrence exactly once', async () => {
    const jobs = 8;
    const steps = 20;
    for (let i = 0; i < jobs; i++) {
      await createCronJob(database.db, {
        profileId: 'main',
        creatorUserId: `user-${i}`,
        byOperator: false,
        prompt: `report ${i}`,
        schedule: 'every 1m',
      });
    }
    processes.push(await startScheduler(env), await startScheduler(env));
    for (let step = 0; step < steps; step++) {
      await advanceClock(database, 60_000);
      // Both replicas race for the due jobs; wait until every job moved past the clock and every
      // run was dispatched before letting the next minute pass.
      await waitFor(
        async () => {
          const now = await cronNow(database.db);
          const behind = await database.db
            .selectFrom('cron_jobs')
            .select('id')
            .where((eb) => eb.or([eb('next_run_at', '<=', now), eb('next_run_at', 'is', null)]))
            .execute();
          const pending = await database.db.selectFrom('cron_runs').select('id').where('status', '=', 'pending').execute();
          return behind.length === 0 && pending.length === 0;
        },
        { timeoutMs: 30_000, what: `step ${step}` },
      );
    }
    const runs = await database.db.selectFrom('cron_runs').select(['job_id', 'scheduled_for', 'status', 'trigger', 'event_id']).orderBy('job_id').orderBy('scheduled_for').execute();
    expect(runs).toHaveLength(jobs * steps);
    expect(runs.every((run) => run.status === 'running' && run.trigger === 'schedule' && run.event_id !== null)).toBe(true);
    // Per job: one run per minute, none missing and none twice.
    const byJob = new Map<string, typeof runs>();
    for (const run of runs) byJob.set(run.job_id, [...(byJob.get(run.job_id) ?? []), run]);
    for (const jobRuns of byJob.values()) {
      const times = jobRuns.map((run) => run.scheduled_for.getTime());
      expect(times).toHaveLength(steps);
      for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBe(60_000);
    }
    // Each run went through the normal run path once: one inbound event per run, in its own session.
    const events = await database.db.selectFrom('inbound_events').select(['dedupe_key', 'session_id', 'platform', 'status']).where('dedupe_key', 'like', 'cron:%').execute();
    expect(events).toHaveLength(jobs * steps);
    expect(new Set(events.map((event) => event.session_id)).size).toBe(jobs * steps);
    expect(events.every((event) => event.platform === 'cron' && event.status === 'pending')).toBe(true);
    // Both replicas really took part: each started some of the runs (the odds that one wins all
    // twenty races are about one in a million).
    for (const process of processes) expect(process.output()).toContain('cron runs started');
    await Promise.all(processes.splice(0).map((p) => stopProcess(p, 'SIGTERM')));
  });

  it('after a restart, missed occurrences follow each job’s policy: skip, or run once', async () => {
    await sql`DELETE FROM cron_jobs`.execute(database.db);
    const make = (name: string, schedule: string, missedPolicy: 'skip' | 'run_once') =>
      createCronJob(database.db, { profileId: 'main', creatorUserId: 'owner', byOperator: false, name, prompt: name, schedule, missedPolicy });
    const skip = await make('hourly-skip', 'every 1h', 'skip');
    const once = await make('hourly-once', 'every 1h', 'run_once');
    const oneShotSkip = await make('one-shot-skip', 'in 2h', 'skip');
    const oneShotRun = await make('one-shot-run', 'in 2h', 'run_once');

    const first = await startScheduler(env);
    processes.push(first);
    await advanceClock(database, 3_600_000);
    await waitFor(async () => (await database.db.selectFrom('cron_runs').select('id').where('status', '=', 'running').execute()).length === 2, { what: 'the first hourly runs' });
    await stopProcess(first, 'SIGKILL');

    // Down for five hours: four hourly occurrences and both one-shots pass with nobody running.
    await advanceClock(database, 5 * 3_600_000 - 15 * 60_000);
    processes.push(await startScheduler(env));
    const runsOf = (jobId: string) => database.db.selectFrom('cron_runs').selectAll().where('job_id', '=', jobId).orderBy('scheduled_for').execute();
    await waitFor(
      async () => {
        const all = await Promise.all([skip, once, oneShotSkip, oneShotRun].map((job) => runsOf(job.id)));
        return all.every((runs) => runs.some((run) => run.trigger === 'missed' && run.status !== 'pending'));
      },
      { what: 'missed occurrences handled' },
    );
    const now = await cronNow(database.db);

    const skipRuns = await runsOf(skip.id);
    expect(skipRuns.map((run) => [run.trigger, run.status])).toEqual([
      ['schedule', 'running'],
      ['missed', 'skipped'],
    ]);
    expect(skipRuns[1]?.error).toMatch(/missed 4 occurrence\(s\).*policy skip/);

    const onceRuns = await runsOf(once.id);
    expect(onceRuns.map((run) => [run.trigger, run.status])).toEqual([
      ['schedule', 'running'],
      ['missed', 'running'],
    ]);

    expect((await runsOf(oneShotSkip.id)).map((run) => [run.trigger, run.status])).toEqual([['missed', 'skipped']]);
    expect((await runsOf(oneShotRun.id)).map((run) => [run.trigger, run.status])).toEqual([['missed', 'running']]);

    const jobs = await database.db.selectFrom('cron_jobs').select(['id', 'next_run_at']).execute();
    const next = new Map(jobs.map((job) => [job.id, job.next_run_at]));
    // Recurring jobs continue from now on their own grid; used-up one-shots have no next run.
    for (const id of [skip.id, once.id]) {
      const at = next.get(id);
      expect(at && at.getTime() > now.getTime() && at.getTime() - now.getTime() <= 3_600_000).toBe(true);
    }
    expect(next.get(oneShotSkip.id)).toBeNull();
    expect(next.get(oneShotRun.id)).toBeNull();
  });
});
