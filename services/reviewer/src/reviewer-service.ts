import type { Config, Logger, PriceTable } from '@herald/core';
import { recordDeadLetter, recordReview } from '@herald/telemetry';
import type { Provider } from '@herald/agent';
import { finishReview, giveUpReview, handBackReview, openReviews, REVIEW_DEAD_LETTER_QUEUE, REVIEW_QUEUE, reviewQueues, ReviewSupersededError, sendReviewJob, startReviewRun } from '@herald/knowledge';
import type { ReviewJob, ReviewRun } from '@herald/knowledge';
import { isConnectionError } from '@herald/db';
import type { Db } from '@herald/db';
import { isLastAttempt, JobRuntime } from '@herald/jobs';
import type { Job } from '@herald/jobs';
import type { ToolRegistry } from '@herald/tools';
import { runReview } from './review-agent.ts';

export interface ReviewerServiceOptions {
  config: Config;
  db: Db;
  /** Null: no model configured; reviews are recorded as failed with that reason. */
  provider: Provider | null;
  registry: ToolRegistry;
  logger: Logger;
  /** What the review's model calls cost (HERALD_PRICES_FILE, then the built-in table); the built-in table when not given. */
  prices?: PriceTable | undefined;
}

export type ReviewRunOutcome = 'done' | 'failed' | 'retry' | 'not-run' | 'superseded';

/** The run failed and pg-boss is to retry it (or dead-letter it after the last attempt). */
class ReviewAttemptFailed extends Error {
  override readonly name = 'ReviewAttemptFailed';
}

/**
 * Consumes the review queue (pg-boss jobs the worker sent in the turn's completion transaction)
 * with its own concurrency budget. pg-boss hands a job to one reviewer at a time, retries a failed
 * run with backoff, runs it again when its reviewer died (after HERALD_REVIEW_TIMEOUT_MS) and
 * dead-letters it after HERALD_REVIEW_MAX_ATTEMPTS runs; the reviews row is the record the runs
 * write, and its attempt number fences a run that outlived its job's expiry.
 */
export class ReviewerService {
  readonly #options: ReviewerServiceOptions;
  readonly #jobs: JobRuntime;
  #started: Promise<void> | undefined;

  constructor(options: ReviewerServiceOptions) {
    this.#options = options;
    this.#jobs = new JobRuntime({
      db: options.db,
      logger: options.logger,
      queues: reviewQueues(options.config.roles.reviewer),
      maintenanceIntervalSeconds: Math.max(1, Math.round(options.config.roles.reconcileIntervalMs / 1000)),
    });
  }

  start(): Promise<void> {
    this.#started ??= (async () => {
      const { config } = this.#options;
      await this.#jobs.start();
      await this.#resendOpenReviews();
      const pollMs = Math.min(1000, config.roles.reconcileIntervalMs);
      this.#jobs.consume<ReviewJob>(REVIEW_QUEUE, { concurrency: config.roles.reviewer.concurrency, pollMs }, (job, signal) => this.#process(job, signal));
      this.#jobs.consume<ReviewJob>(REVIEW_DEAD_LETTER_QUEUE, { concurrency: 1, pollMs: config.roles.reconcileIntervalMs }, (job) => this.#deadLetter(job));
    })();
    return this.#started;
  }

  /**
   * Reviews left open without a job (a database upgraded from the BullMQ reviewer): sending is a
   * no-op for every review whose job exists, since the job id is the review id.
   */
  async #resendOpenReviews(): Promise<void> {
    const { db, logger } = this.#options;
    let sent = 0;
    for (const id of await openReviews(db)) if (await sendReviewJob(db, id)) sent++;
    if (sent > 0) logger.info({ reviews: sent }, 'sent jobs for open reviews that had none');
  }

  async #process(job: Job<ReviewJob>, signal: AbortSignal): Promise<void> {
    const outcome = await this.runOnce(job.data.reviewId, job.retryCount, isLastAttempt(job), signal);
    recordReview(outcome);
    if (outcome === 'retry' || outcome === 'failed') throw new ReviewAttemptFailed(`review ${job.data.reviewId}: ${outcome}`);
  }

  async #deadLetter(job: Job<ReviewJob>): Promise<void> {
    if (await giveUpReview(this.#options.db, job.data.reviewId)) {
      this.#options.logger.error({ reviewId: job.data.reviewId }, 'review dead-lettered: no run finished it');
      recordDeadLetter('review_job');
    }
  }

  /** One run of a review; what happened is in the result and in the reviews row. */
  async runOnce(reviewId: string, retryCount: number, lastAttempt: boolean, signal: AbortSignal): Promise<ReviewRunOutcome> {
    const { db } = this.#options;
    const logger = this.#options.logger.child({ reviewId, attempt: retryCount + 1 });
    const run = await startReviewRun(db, reviewId, retryCount);
    if (!run) return 'not-run';
    if (this.#options.provider === null) {
      await finishReview(db, run, { status: 'failed', actions: [], summary: null, error: 'no model is configured (HERALD_MODEL)' });
      return 'done';
    }
    try {
      const result = await runReview({ ...this.#options, provider: this.#options.provider }, run, signal);
      if (!(await finishReview(db, run, { status: 'done', error: null, ...result }))) return 'superseded';
      logger.info({ actions: result.actions.length }, 'review done');
      return 'done';
    } catch (error) {
      if (ReviewSupersededError.isInstance(error)) {
        logger.warn({}, 'a later run took over the review');
        return 'superseded';
      }
      return this.#failed(run, error, lastAttempt, logger);
    }
  }

  async #failed(run: ReviewRun, error: unknown, lastAttempt: boolean, logger: Logger): Promise<ReviewRunOutcome> {
    const { db } = this.#options;
    const message = (error as Error)?.message ?? String(error);
    if (lastAttempt) {
      logger.error({ err: error }, 'review failed; no attempts left');
      await finishReview(db, run, { status: 'failed', actions: [], summary: null, error: message });
      return 'failed';
    }
    logger.warn({ err: error, storage: isConnectionError(error) }, 'review failed; pg-boss retries it');
    await handBackReview(db, run, message).catch(() => undefined);
    return 'retry';
  }

  /** Stops taking reviews; runs still going after `graceMs` are aborted and retried elsewhere. */
  async close(graceMs: number): Promise<void> {
    await this.#started?.catch(() => undefined);
    await this.#jobs.stop(graceMs);
  }
}
