import type PgBoss from 'pg-boss';
import { linkSignals, sleep } from '@herald/core';
import type { Logger } from '@herald/core';
import { JOBS_SCHEMA } from './boss-db.ts';

/** One job as its handler sees it: pg-boss's row with its retry count. */
export type Job<T> = PgBoss.JobWithMetadata<T>;

/**
 * Runs one job. Returning completes it; throwing fails it, and pg-boss retries it with its
 * queue's backoff or, past the last retry, moves it to the dead-letter queue. `signal` aborts at
 * the job's expiry (before pg-boss would hand it to someone else) and at shutdown.
 */
export type JobHandler<T> = (job: Job<T>, signal: AbortSignal) => Promise<void>;

export interface ConsumerOptions {
  /** Jobs of this queue run at once in this process. */
  concurrency: number;
  /** How often an idle slot asks for a job; `nudge()` asks at once. */
  pollMs: number;
}

/**
 * Thrown by a handler for a failure no retry can change (a receiver at a refused address): the job
 * fails for good at once and goes to its dead-letter queue, instead of waiting out the backoff.
 */
export class FinalJobError extends Error {
  override name = 'FinalJobError';
}

/** True on the job's last run: failing it now sends it to the dead-letter queue. */
export function isLastAttempt(job: Job<unknown>): boolean {
  return job.retryCount >= job.retryLimit;
}

// A run stops this long before pg-boss's expiry, so it is over before a retry can start.
const EXPIRY_MARGIN_MS = 2000;

/**
 * Takes jobs of one queue with pg-boss's fetch (SKIP LOCKED inside pg-boss) and settles each one
 * with complete or fail. pg-boss's own work() loop is not used: it neither awaits nor catches its
 * complete/fail calls (a Postgres outage then ends the process with an unhandled rejection) and it
 * cannot abort a handler at expiry or shutdown. Everything else (claims, retries, backoff,
 * expiry, dead letters, retention) is pg-boss's.
 */
export class JobConsumer<T> {
  readonly #boss: PgBoss;
  readonly #queue: string;
  readonly #options: ConsumerOptions;
  readonly #handler: JobHandler<T>;
  readonly #logger: Logger;
  readonly #stopping = new AbortController();
  readonly #abortRuns = new AbortController();
  readonly #wakers = new Set<() => void>();
  #slots: Promise<void>[] = [];

  constructor(boss: PgBoss, queue: string, options: ConsumerOptions, handler: JobHandler<T>, logger: Logger) {
    this.#boss = boss;
    this.#queue = queue;
    this.#options = options;
    this.#handler = handler;
    this.#logger = logger.child({ queue });
  }

  start(): void {
    if (this.#slots.length > 0) return;
    for (let i = 0; i < this.#options.concurrency; i++) this.#slots.push(this.#slot());
  }

  /** A job was just sent: idle slots look now instead of at their next poll. */
  nudge(): void {
    for (const wake of this.#wakers) wake();
  }

  /** Stops taking jobs; runs still going after `graceMs` are aborted (and so failed, then retried). */
  async stop(graceMs: number): Promise<void> {
    this.#stopping.abort();
    this.nudge();
    const timer = setTimeout(() => this.#abortRuns.abort(new Error('shutting down')), graceMs);
    try {
      await Promise.all(this.#slots);
    } finally {
      clearTimeout(timer);
    }
  }

  async #slot(): Promise<void> {
    while (!this.#stopping.signal.aborted) {
      const job = await this.#fetch();
      if (job) await this.#run(job);
      else await this.#idle();
    }
  }

  /** pg-boss's fetch returns nothing when Postgres cannot be reached: the slot just polls on. */
  async #fetch(): Promise<Job<T> | undefined> {
    try {
      const [job] = await this.#boss.fetch<T>(this.#queue, { batchSize: 1, includeMetadata: true });
      return job;
    } catch (error) {
      this.#logger.warn({ err: error }, 'could not fetch jobs; will retry');
      return undefined;
    }
  }

  async #idle(): Promise<void> {
    const wake = new AbortController();
    const waker = () => wake.abort();
    this.#wakers.add(waker);
    // A link, not AbortSignal.any: Node 20 keeps a WeakRef in the long-lived source per composite (linked-signal.ts).
    const link = linkSignals([wake.signal, this.#stopping.signal]);
    try {
      await sleep(this.#options.pollMs, link.signal).catch(() => undefined);
    } finally {
      link.dispose();
      this.#wakers.delete(waker);
    }
  }

  async #run(job: Job<T>): Promise<void> {
    const logger = this.#logger.child({ jobId: job.id, retryCount: job.retryCount });
    const deadline = Math.max(1000, job.expireInSeconds * 1000 - EXPIRY_MARGIN_MS);
    // A link and a timer, not AbortSignal.any over AbortSignal.timeout: the model SDKs add an abort
    // listener to the handler's signal and never remove it, which kept every run's composite alive
    // in the reviewer (the soak's heap snapshots of 2026-12-06; linked-signal.ts). Both go at the end.
    const expiry = new AbortController();
    const timer = setTimeout(() => expiry.abort(new DOMException('the job reached its deadline', 'TimeoutError')), deadline);
    timer.unref();
    const link = linkSignals([this.#abortRuns.signal, expiry.signal]);
    let failure: unknown;
    try {
      await this.#handler(job, link.signal);
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
    try {
      if (failure === undefined) await this.#boss.complete(this.#queue, job.id);
      else {
        const message = (failure as Error)?.message ?? String(failure);
        const final = failure instanceof FinalJobError;
        logger.warn({ err: failure, lastAttempt: final || isLastAttempt(job) }, final ? 'job failed for good; no retry can change it' : 'job failed');
        // pg-boss retries while retry_count < retry_limit: lowering the limit makes this run its last.
        if (final) await this.#boss.getDb().executeSql(`UPDATE ${JOBS_SCHEMA}.job SET retry_limit = retry_count WHERE name = $1 AND id = $2`, [this.#queue, job.id]);
        await this.#boss.fail(this.#queue, job.id, { message });
      }
    } catch (error) {
      // pg-boss's maintenance expires the job and it runs again; handlers are idempotent.
      logger.warn({ err: error }, 'could not settle the job; it expires and is retried');
    }
  }
}
