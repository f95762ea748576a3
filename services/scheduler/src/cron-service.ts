import type { Queue } from 'bullmq';
import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { enqueueWake } from '@herald/queue';
import { recordCronFire, recordDeadLetter } from '@herald/telemetry';
import type { WakeJob } from '@herald/queue';
import { dispatchPendingRuns, materializeDueRuns } from './cron-firing.ts';
import { completeFinishedRuns } from './cron-completion.ts';

export interface CronServiceOptions {
  db: Db;
  queue: Queue<WakeJob>;
  logger: Logger;
  /** How often due jobs, pending runs and finished runs are looked at. */
  tickMs: number;
  /** Consecutive failed runs after which a job is paused. */
  maxFailures: number;
  /** Called when deliveries were put into the outbox (to nudge a local delivery consumer). */
  onDeliveries?: () => void;
}

export interface TickResult {
  created: number;
  dispatched: number;
  completed: number;
}

/**
 * The cron loop of one scheduler replica. Any number of replicas may run it: every step claims its
 * rows with SKIP LOCKED inside one transaction, so an occurrence becomes one run, a run one event,
 * and a finished run one set of deliveries, whichever replica gets there first.
 */
export class CronService {
  readonly #options: CronServiceOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<TickResult> | undefined;

  constructor(options: CronServiceOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.tick(), this.#options.tickMs);
  }

  /** One pass; concurrent calls share it. Failures are logged and retried on the next tick. */
  tick(): Promise<TickResult> {
    this.#running ??= this.#tick().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #tick(): Promise<TickResult> {
    const { db, queue, logger } = this.#options;
    const result: TickResult = { created: 0, dispatched: 0, completed: 0 };
    try {
      result.created = await materializeDueRuns(db);
      const dispatched = await dispatchPendingRuns(db);
      result.dispatched = dispatched.length;
      for (let i = 0; i < dispatched.length; i++) recordCronFire('fired');
      for (const run of dispatched) {
        // Committed already: a failed enqueue is picked up by the reconciler sweep.
        await enqueueWake(queue, run.sessionId, run.wakeGeneration).catch((error: unknown) =>
          logger.warn({ err: error, runId: run.runId }, 'wake-up enqueue failed; the reconciler will retry'),
        );
      }
      const completed = await completeFinishedRuns(db, { maxFailures: this.#options.maxFailures });
      result.completed = completed.length;
      for (const run of completed) {
        logger.info({ runId: run.runId, jobId: run.jobId, status: run.status, deliveries: run.deliveries }, 'cron run finished');
        recordCronFire(run.status);
        if (run.paused) {
          logger.warn({ jobId: run.jobId }, 'cron job paused after repeated failures');
          recordDeadLetter('cron_job');
        }
      }
      if (completed.some((run) => run.deliveries > 0)) this.#options.onDeliveries?.();
      if (result.created > 0 || result.dispatched > 0) logger.info({ created: result.created, dispatched: result.dispatched }, 'cron runs started');
    } catch (error) {
      logger.warn({ err: error }, 'cron tick failed; will retry');
    }
    return result;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
