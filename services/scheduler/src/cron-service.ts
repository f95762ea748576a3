import type { Logger } from '@herald/core';
import {
  CRON_FINISH_DEAD_LETTER_QUEUE,
  CRON_FINISH_QUEUE,
  CRON_FIRE_DEAD_LETTER_QUEUE,
  CRON_FIRE_QUEUE,
  completeRun,
  cronQueues,
  dispatchManualRun,
  failRun,
  fireOccurrence,
  pauseCronJob,
  sendOpenFires,
  sendRunFinished,
  unfinishedRuns,
} from '@herald/cron';
import type { CronFinishJob, CronFireJob, DispatchedRun } from '@herald/cron';
import type { Db } from '@herald/db';
import { jobFailureMessage, JobRuntime } from '@herald/jobs';
import type { Job } from '@herald/jobs';
import { enqueueWake } from '@herald/queue';
import { recordCronFire, recordDeadLetter } from '@herald/telemetry';
import type { RunQueue } from '@herald/queue';

export interface CronServiceOptions {
  db: Db;
  queue: RunQueue;
  logger: Logger;
  /** How often an idle scheduler asks pg-boss for due fires and finished runs. */
  tickMs: number;
  /** How often the sweep for runs whose finish was never sent runs; also pg-boss's maintenance interval. */
  sweepIntervalMs: number;
  /** Consecutive failed runs after which a job is paused. */
  maxFailures: number;
  /** Fires handled at once by this replica. @default 4 */
  concurrency?: number;
  /** Called when deliveries were put into the outbox (to nudge a local delivery consumer). */
  onDeliveries?: () => void;
}

/**
 * The cron side of one scheduler replica, on pg-boss. Any number of replicas may run it: pg-boss
 * hands each fire (one per occurrence, its id derived from job and time) and each finish (one per
 * run) to one replica at a time, retries a failed one with backoff and dead-letters it after its
 * retries, and the handlers run under the job's or run's row lock, so a retried or duplicate job
 * changes nothing twice. cron_runs is the history the handlers write.
 */
export class CronService {
  readonly #options: CronServiceOptions;
  readonly #jobs: JobRuntime;
  #sweepTimer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;
  #started: Promise<void> | undefined;

  constructor(options: CronServiceOptions) {
    this.#options = options;
    this.#jobs = new JobRuntime({
      db: options.db,
      logger: options.logger,
      queues: cronQueues(),
      maintenanceIntervalSeconds: Math.max(1, Math.round(options.sweepIntervalMs / 1000)),
    });
  }

  start(): Promise<void> {
    this.#started ??= (async () => {
      const { tickMs, sweepIntervalMs } = this.#options;
      await this.#jobs.start();
      await this.#resendOpen();
      const concurrency = this.#options.concurrency ?? 4;
      this.#jobs.consume<CronFireJob>(CRON_FIRE_QUEUE, { concurrency, pollMs: tickMs }, (job) => this.#fire(job));
      this.#jobs.consume<CronFinishJob>(CRON_FINISH_QUEUE, { concurrency: 2, pollMs: tickMs }, (job) => this.#finish(job.data.eventId));
      this.#jobs.consume<CronFireJob>(CRON_FIRE_DEAD_LETTER_QUEUE, { concurrency: 1, pollMs: sweepIntervalMs }, (job) => this.#fireDeadLettered(job));
      this.#jobs.consume<CronFinishJob>(CRON_FINISH_DEAD_LETTER_QUEUE, { concurrency: 1, pollMs: sweepIntervalMs }, (job) => this.#finishDeadLettered(job));
      this.#sweepTimer = setInterval(() => void this.sweep(), sweepIntervalMs);
    })();
    return this.#started;
  }

  /** Sends the fires of open jobs and runs that have none (an upgraded database; see sendOpenFires). */
  async #resendOpen(): Promise<void> {
    const sent = await sendOpenFires(this.#options.db);
    if (sent > 0) this.#options.logger.info({ sent }, 'sent fires for cron jobs and runs that had none');
  }

  async #fire(job: Job<CronFireJob>): Promise<void> {
    const { db, queue, logger } = this.#options;
    const data = job.data;
    let dispatched: DispatchedRun[];
    if ('runId' in data) {
      const run = await dispatchManualRun(db, data.runId);
      dispatched = run ? [run] : [];
    } else {
      dispatched = await fireOccurrence(db, data.jobId, new Date(data.scheduledFor));
    }
    for (const run of dispatched) {
      // Committed already: a failed enqueue is picked up by the reconciler sweep.
      await enqueueWake(queue, run.sessionId, run.wakeGeneration).catch((error: unknown) => logger.warn({ err: error, runId: run.runId }, 'wake-up enqueue failed; the reconciler will retry'));
    }
    for (let i = 0; i < dispatched.length; i++) recordCronFire('fired');
    if (dispatched.length > 0) logger.info({ dispatched: dispatched.length }, 'cron runs started');
  }

  async #finish(eventId: string): Promise<void> {
    const { db, logger } = this.#options;
    const run = await completeRun(db, eventId, { maxFailures: this.#options.maxFailures });
    if (!run) return;
    logger.info({ runId: run.runId, jobId: run.jobId, status: run.status, deliveries: run.deliveries }, 'cron run finished');
    recordCronFire(run.status);
    if (run.paused) {
      logger.warn({ jobId: run.jobId }, 'cron job paused after repeated failures');
      recordDeadLetter('cron_job');
    }
    if (run.deliveries > 0) this.#options.onDeliveries?.();
  }

  async #fireDeadLettered(job: Job<CronFireJob>): Promise<void> {
    const { db, logger } = this.#options;
    const cause = jobFailureMessage(job.output);
    if ('runId' in job.data) {
      await failRun(db, { runId: job.data.runId }, `the run could not be started: ${cause}`);
      logger.error({ runId: job.data.runId, cause }, 'cron run dead-lettered before it started');
      return;
    }
    // Its occurrence never advanced: pause the job, with the reason, rather than leave it silent.
    const reason = `the run due at ${job.data.scheduledFor} could not be started (${cause}); resume the job to go on`;
    await pauseCronJob(db, job.data.jobId, reason);
    logger.error({ jobId: job.data.jobId, cause }, 'cron fire dead-lettered; job paused');
  }

  async #finishDeadLettered(job: Job<CronFinishJob>): Promise<void> {
    const cause = jobFailureMessage(job.output);
    await failRun(this.#options.db, { eventId: job.data.eventId }, `the run ended but could not be recorded: ${cause}`);
    this.#options.logger.error({ eventId: job.data.eventId, cause }, 'cron finish dead-lettered');
  }

  /**
   * Sends the finish of runs whose turn ended a sweep interval ago without one: the worker sends it
   * in the turn's completion transaction, which a worker dying right after the reply never reaches.
   */
  sweep(): Promise<void> {
    this.#sweeping ??= (async () => {
      const { db, logger, sweepIntervalMs } = this.#options;
      try {
        const events = await unfinishedRuns(db, sweepIntervalMs);
        let sent = 0;
        for (const eventId of events) if (await sendRunFinished(db, eventId)) sent++;
        if (sent > 0) logger.info({ runs: sent }, 'sent the finish of cron runs whose worker never did');
      } catch (error) {
        logger.warn({ err: error }, 'cron sweep failed; will retry');
      }
    })().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async stop(graceMs = 5000): Promise<void> {
    clearInterval(this.#sweepTimer);
    await this.#started?.catch(() => undefined);
    await this.#sweeping;
    await this.#jobs.stop(graceMs);
  }
}
