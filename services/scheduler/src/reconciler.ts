import type { Logger } from '@herald/core';
import { expireWaits, findStrandedSessions } from '@herald/session';
import type { Db } from '@herald/db';
import { enqueueWake } from '@herald/queue';
import type { RunQueue } from '@herald/queue';

export interface ReconcilerOptions {
  db: Db;
  queue: RunQueue;
  logger: Logger;
  intervalMs: number;
  /** Events younger than this are left to the normal path. */
  graceMs: number;
}

/**
 * The sweep that makes Postgres the truth: any session with open events, no live lease and (maybe)
 * no job gets a wake-up. Enqueueing is idempotent on the job id, so a sweep that races the normal
 * path or another scheduler replica adds nothing twice.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

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
      return stranded.length;
    } catch (error) {
      logger.warn({ err: error }, 'reconciler sweep failed; will retry');
      return 0;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
