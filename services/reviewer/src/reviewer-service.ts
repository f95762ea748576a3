import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { backoffMs } from '@herald/core';
import type { Config, Logger } from '@herald/core';
import { recordDeadLetter, recordReview } from '@herald/telemetry';
import type { Provider } from '@herald/agent';
import { claimReview, findDueReviews, finishReview, renewReviewClaim, retryReviewLater, ReviewClaimLostError } from '@herald/knowledge';
import { isConnectionError } from '@herald/db';
import type { Db } from '@herald/db';
import type { ReviewClaim } from '@herald/knowledge';
import { enqueueReview, REVIEW_QUEUE } from '@herald/queue';
import type { ReviewJob } from '@herald/queue';
import type { ToolRegistry } from '@herald/tools';
import { runReview } from './review-agent.ts';

export interface ReviewerServiceOptions {
  config: Config;
  db: Db;
  /** A connection with maxRetriesPerRequest: null, as BullMQ workers need. */
  connection: Redis;
  /** For the retries and the sweep's re-enqueues. */
  queue: Queue<ReviewJob>;
  /** Null: no model configured; reviews are recorded as failed with that reason. */
  provider: Provider | null;
  registry: ToolRegistry;
  logger: Logger;
}

export type ReviewRunOutcome = 'done' | 'failed' | 'retry' | 'not-claimed' | 'claim-lost';

/**
 * Consumes the review queue with its own concurrency budget. Postgres decides who runs a review:
 * a job only claims the row, so duplicate jobs, several replicas and BullMQ's stalled-job retries
 * all end in one run per attempt. A sweep re-queues reviews whose job vanished or whose reviewer
 * died, which is also how a killed reviewer's review is run again after its claim expires.
 */
export class ReviewerService {
  readonly #options: ReviewerServiceOptions;
  readonly #owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #stopping = new AbortController();
  #worker: Worker<ReviewJob> | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: ReviewerServiceOptions) {
    this.#options = options;
  }

  get owner(): string {
    return this.#owner;
  }

  async start(): Promise<void> {
    if (this.#worker) return;
    const { config, connection, logger } = this.#options;
    this.#worker = new Worker<ReviewJob>(REVIEW_QUEUE, (job) => this.#process(job), {
      connection,
      prefix: config.queuePrefix,
      concurrency: config.reviewerConcurrency,
      autorun: true,
    });
    this.#worker.on('error', (error) => logger.error({ err: error }, 'review queue worker error'));
    this.#sweepTimer = setInterval(() => void this.sweep(), config.reconcileIntervalMs);
    await this.sweep();
  }

  async #process(job: Job<ReviewJob>): Promise<void> {
    const outcome = await this.runOne(job.data.reviewId);
    recordReview(outcome);
    if (outcome === 'failed') recordDeadLetter('review_job');
  }

  /** Claims and runs one review; what happened is in the result and in the reviews row. */
  async runOne(reviewId: string): Promise<ReviewRunOutcome> {
    const { config, db } = this.#options;
    const logger = this.#options.logger.child({ reviewId });
    const claim = await claimReview(db, reviewId, this.#owner, config.leaseTtlMs);
    if (!claim) return 'not-claimed';
    const attempts = claim.review.attempts;
    if (attempts > config.reviewMaxAttempts) {
      // Earlier runs died without recording anything (crashes): stop taking it up.
      await finishReview(db, claim, {
        status: 'failed',
        actions: [],
        summary: null,
        error: `gave up after ${attempts - 1} attempts that did not finish (${claim.review.error ?? 'the reviewer stopped'})`,
      });
      return 'failed';
    }
    if (this.#options.provider === null) {
      await finishReview(db, claim, { status: 'failed', actions: [], summary: null, error: 'no model is configured (HERALD_MODEL)' });
      return 'failed';
    }
    const lost = new AbortController();
    const renew = setInterval(() => {
      renewReviewClaim(db, claim, config.leaseTtlMs)
        .then((held) => {
          if (!held) lost.abort(new ReviewClaimLostError(reviewId));
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'review claim renewal failed; will retry'));
    }, Math.max(250, Math.floor(config.leaseTtlMs / 3)));
    const signal = AbortSignal.any([lost.signal, this.#stopping.signal]);
    try {
      const result = await runReview({ ...this.#options, provider: this.#options.provider }, claim, signal);
      if (!(await finishReview(db, claim, { status: 'done', error: null, ...result }))) return 'claim-lost';
      logger.info({ actions: result.actions.length, attempts }, 'review done');
      return 'done';
    } catch (error) {
      if (lost.signal.aborted || ReviewClaimLostError.isInstance(error)) {
        logger.warn({}, 'review claim lost; another run owns the review');
        return 'claim-lost';
      }
      if (this.#stopping.signal.aborted) {
        // Shutting down: hand it back at once; the next reviewer takes it up.
        await retryReviewLater(db, claim, 'the reviewer shut down mid-review', 0).catch(() => undefined);
        return 'retry';
      }
      return this.#failed(claim, error, logger);
    } finally {
      clearInterval(renew);
    }
  }

  async #failed(claim: ReviewClaim, error: unknown, logger: Logger): Promise<ReviewRunOutcome> {
    const { config, db, queue } = this.#options;
    const message = (error as Error)?.message ?? String(error);
    const attempts = claim.review.attempts;
    if (attempts >= config.reviewMaxAttempts) {
      logger.error({ err: error, attempts }, 'review failed; no attempts left');
      await finishReview(db, claim, { status: 'failed', actions: [], summary: null, error: message });
      return 'failed';
    }
    const delayMs = backoffMs(attempts, config.reviewRetryBaseMs, 10 * 60_000);
    logger.warn({ err: error, attempts, delayMs, storage: isConnectionError(error) }, 'review failed; will retry');
    if (await retryReviewLater(db, claim, message, delayMs)) {
      await enqueueReview(queue, claim.review.id, attempts, delayMs).catch((enqueueError: unknown) =>
        logger.warn({ err: enqueueError }, 'review retry enqueue failed; the sweep picks it up'),
      );
    }
    return 'retry';
  }

  /** Re-queues reviews whose job was lost or whose reviewer died; concurrent calls share one run. */
  sweep(): Promise<number> {
    this.#sweeping ??= (async () => {
      const { config, db, queue, logger } = this.#options;
      try {
        const due = await findDueReviews(db, Math.min(2000, config.reconcileIntervalMs));
        for (const review of due) await enqueueReview(queue, review.id, review.attempts);
        if (due.length > 0) logger.info({ reviews: due.length }, 'review sweep re-queued reviews');
        return due.length;
      } catch (error) {
        logger.warn({ err: error }, 'review sweep failed; will retry');
        return 0;
      }
    })().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  /** Stops taking reviews; after `graceMs` running ones are handed back for another reviewer. */
  close(graceMs: number): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#sweepTimer);
      await this.#sweeping;
      const worker = this.#worker;
      if (!worker) return;
      const timer = setTimeout(() => this.#stopping.abort(new Error('shutdown deadline')), graceMs);
      try {
        await worker.close();
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.#closing;
  }
}
