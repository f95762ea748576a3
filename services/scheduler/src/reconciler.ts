import type { Logger } from '@herald/core';
import { expireWaits } from '@herald/waits';
import { findStrandedSessions } from '@herald/leases';
import type { Db } from '@herald/db';
import { enqueueWake } from '@herald/queue';
import { pruneAudit } from '@herald/audit';
import { pruneBlobs } from '@herald/attachments';
import type { RunQueue } from '@herald/queue';

export interface ReconcilerOptions {
  db: Db;
  queue: RunQueue;
  logger: Logger;
  intervalMs: number;
  /** Events younger than this are left to the normal path. */
  graceMs: number;
  /** HERALD_AUDIT_RETENTION_DAYS: older audit entries are pruned, at most once an hour; 0 keeps them. */
  auditRetentionDays?: number | undefined;
}

const AUDIT_PRUNE_EVERY_MS = 3_600_000;

/**
 * The sweep that makes Postgres the truth: any session with open events, no live lease and (maybe)
 * no job gets a wake-up. Enqueueing is idempotent on the job id, so a sweep that races the normal
 * path or another scheduler replica adds nothing twice.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #prunedAt = 0;
  #blobsPrunedAt = 0;

  constructor(options: ReconcilerOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.sweep(), this.#options.intervalMs);
  }

  /** One sweep; returns how many sessions were re-enqueued. Concurrent calls share one run. */
  sweep(): Promise<number> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #sweep(): Promise<number> {
    const { db, queue, logger, graceMs } = this.#options;
    try {
      // Silence is not consent: a lapsed approval resumes its turn as denied, a question as unanswered.
      const lapsed = await expireWaits(db);
      for (const session of lapsed) await enqueueWake(queue, session.sessionId, session.wakeGeneration);
      if (lapsed.length > 0) logger.info({ sessions: lapsed.length }, 'approvals and questions lapsed; turns resumed');
      const stranded = await findStrandedSessions(db, graceMs);
      for (const session of stranded) await enqueueWake(queue, session.sessionId, session.wakeGeneration);
      if (stranded.length > 0) logger.info({ sessions: stranded.length }, 'reconciler re-enqueued stranded sessions');
      await this.#pruneAudit();
      await this.#pruneBlobs();
      return stranded.length;
    } catch (error) {
      logger.warn({ err: error }, 'reconciler sweep failed; will retry');
      return 0;
    }
  }

  async #pruneAudit(): Promise<void> {
    const days = this.#options.auditRetentionDays ?? 0;
    if (days <= 0 || Date.now() - this.#prunedAt < AUDIT_PRUNE_EVERY_MS) return;
    this.#prunedAt = Date.now();
    const removed = await pruneAudit(this.#options.db, days);
    if (removed > 0) this.#options.logger.info({ removed, days }, 'pruned audit entries past their retention');
  }

  /** Attachments follow their message: bytes nothing points at any more are dropped, at most once an hour. */
  async #pruneBlobs(): Promise<void> {
    if (Date.now() - this.#blobsPrunedAt < AUDIT_PRUNE_EVERY_MS) return;
    this.#blobsPrunedAt = Date.now();
    const removed = await pruneBlobs(this.#options.db);
    if (removed > 0) this.#options.logger.info({ removed }, 'pruned attachments no message refers to');
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
