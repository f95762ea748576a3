import { z } from 'zod';
import { integer, oneOf } from './fields.ts';

/** A worker: the `runs` consumer that holds session leases and runs turns. */
export interface WorkerRoleConfig {
  /** Sessions one worker process runs at once. */
  concurrency: number;
  leaseTtlMs: number;
  /** Runs of one turn (the first plus resumes after crashes) before it ends with an error reply. */
  turnMaxAttempts: number;
  /** Tool-calling steps per turn before the turn ends with an explicit message. */
  maxIterations: number;
  /** Per-turn recall provider; off by default. */
  recall: 'off' | 'past-sessions';
  /** Parsed transcript messages one worker keeps between turns (docs/decisions/2026-12-06-transcript-cache.md); 0: off. */
  transcriptCacheMessages: number;
  /** And at most this many bytes of them (messageWeight in @herald/transcript). */
  transcriptCacheBytes: number;
}

/** A reviewer: the `review` job consumer, with its own budget apart from the workers'. */
export interface ReviewerRoleConfig {
  concurrency: number;
  /** Runs of one review (the first plus retries and crash takeovers) before it is recorded as failed. */
  maxAttempts: number;
  /** First retry delay of a failed review; doubles each attempt (pg-boss counts whole seconds, at least 1). */
  retryBaseMs: number;
  /** Longest one review run may take; a reviewer that died mid-review has its review run again after this. */
  timeoutMs: number;
}

/** A scheduler: the sweeps and the cron queues. */
export interface SchedulerRoleConfig {
  /** How often an idle scheduler replica asks pg-boss for due cron fires and finished runs. */
  tickMs: number;
  /** Consecutive failed runs after which a cron job is paused and its owner told. */
  cronMaxFailures: number;
}

export interface RolesConfig {
  /** SIGTERM deadline of every role. */
  shutdownTimeoutMs: number;
  /** How often the scheduler sweeps, and the reviewer's pg-boss maintenance and dead-letter pace. */
  reconcileIntervalMs: number;
  worker: WorkerRoleConfig;
  reviewer: ReviewerRoleConfig;
  scheduler: SchedulerRoleConfig;
}

export const rolesSection = z
  .object({
    HERALD_SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).default(25_000),
    HERALD_RECONCILE_INTERVAL_MS: integer(100, 3_600_000).default(5000),
    HERALD_WORKER_CONCURRENCY: integer(1, 1000).default(16),
    HERALD_LEASE_TTL_MS: integer(1000, 600_000).default(10_000),
    HERALD_TURN_MAX_ATTEMPTS: integer(1, 100).default(3),
    HERALD_MAX_ITERATIONS: integer(1, 1000).default(90),
    HERALD_RECALL: oneOf(['off', 'past-sessions']).default('off'),
    HERALD_TRANSCRIPT_CACHE_MESSAGES: integer(0, 10_000_000).default(50_000),
    HERALD_TRANSCRIPT_CACHE_MB: integer(0, 1_000_000).default(64),
    HERALD_REVIEWER_CONCURRENCY: integer(1, 100).default(3),
    HERALD_REVIEW_MAX_ATTEMPTS: integer(1, 20).default(3),
    HERALD_REVIEW_RETRY_BASE_MS: integer(0, 3_600_000).default(5000),
    HERALD_REVIEW_TIMEOUT_MS: integer(3000, 3_600_000).default(900_000),
    HERALD_SCHEDULER_TICK_MS: integer(50, 600_000).default(1000),
    HERALD_CRON_MAX_FAILURES: integer(1, 1000).default(3),
  })
  .transform((e): RolesConfig => ({
    shutdownTimeoutMs: e.HERALD_SHUTDOWN_TIMEOUT_MS,
    reconcileIntervalMs: e.HERALD_RECONCILE_INTERVAL_MS,
    worker: {
      concurrency: e.HERALD_WORKER_CONCURRENCY,
      leaseTtlMs: e.HERALD_LEASE_TTL_MS,
      turnMaxAttempts: e.HERALD_TURN_MAX_ATTEMPTS,
      maxIterations: e.HERALD_MAX_ITERATIONS,
      recall: e.HERALD_RECALL,
      transcriptCacheMessages: e.HERALD_TRANSCRIPT_CACHE_MESSAGES,
      transcriptCacheBytes: e.HERALD_TRANSCRIPT_CACHE_MB * 1024 * 1024,
    },
    reviewer: {
      concurrency: e.HERALD_REVIEWER_CONCURRENCY,
      maxAttempts: e.HERALD_REVIEW_MAX_ATTEMPTS,
      retryBaseMs: e.HERALD_REVIEW_RETRY_BASE_MS,
      timeoutMs: e.HERALD_REVIEW_TIMEOUT_MS,
    },
    scheduler: { tickMs: e.HERALD_SCHEDULER_TICK_MS, cronMaxFailures: e.HERALD_CRON_MAX_FAILURES },
  }));
