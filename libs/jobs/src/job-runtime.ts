import type PgBoss from 'pg-boss';
import type { Kysely } from 'kysely';
import type { Logger } from '@herald/core';
import type { Database } from '@herald/db';
import { bossOptions, newBoss } from './boss-db.ts';
import { JobConsumer } from './job-consumer.ts';
import type { ConsumerOptions, JobHandler } from './job-consumer.ts';
import { ensureQueues } from './job-queues.ts';
import type { QueueSpec } from './job-queues.ts';

export interface JobRuntimeOptions {
  db: Kysely<Database>;
  logger: Logger;
  /** The queues this process consumes; they are created or brought to their spec at start. */
  queues: readonly QueueSpec[];
  /**
   * How often pg-boss's maintenance runs (one process in the cluster per interval): it fails and
   * retries runs past their expiry (a consumer died), archives finished jobs and drops old ones.
   */
  maintenanceIntervalSeconds: number;
}

/**
 * The pg-boss instance of one consuming process (reviewer, scheduler), on Herald's own pool and
 * in its own schema. start() and stop() may be called any number of times.
 */
export class JobRuntime {
  readonly #options: JobRuntimeOptions;
  readonly #consumers: JobConsumer<unknown>[] = [];
  #boss: PgBoss | undefined;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: JobRuntimeOptions) {
    this.#options = options;
  }

  start(): Promise<void> {
    this.#starting ??= (async () => {
      const { db, logger, maintenanceIntervalSeconds } = this.#options;
      const boss = await newBoss(bossOptions(db, { supervise: true, migrate: true, maintenanceIntervalSeconds }));
      boss.on('error', (error) => logger.warn({ err: error }, 'pg-boss maintenance failed; it runs again next interval'));
      await boss.start();
      this.#boss = boss;
      await ensureQueues(boss, this.#options.queues);
    })();
    return this.#starting;
  }

  /** Starts taking jobs of `queue`; only after start() resolved. */
  consume<T>(queue: string, options: ConsumerOptions, handler: JobHandler<T>): JobConsumer<T> {
    if (!this.#boss) throw new Error('JobRuntime.consume() before start()');
    const consumer = new JobConsumer<T>(this.#boss, queue, options, handler, this.#options.logger);
    this.#consumers.push(consumer as JobConsumer<unknown>);
    consumer.start();
    return consumer;
  }

  /** Stops every consumer (running jobs get `graceMs`), then pg-boss's maintenance. */
  stop(graceMs: number): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#starting?.catch(() => undefined);
      await Promise.all(this.#consumers.map((consumer) => consumer.stop(graceMs)));
      await this.#boss?.stop({ graceful: false, close: false });
    })();
    return this.#stopping;
  }
}

/**
 * Installs or upgrades pg-boss's schema and creates Herald's queues: part of `herald migrate`, so
 * processes that only send jobs (ingress, workers, the CLI) find their queues.
 */
export async function prepareJobs(db: Kysely<Database>, queues: readonly QueueSpec[]): Promise<void> {
  const boss = await newBoss(bossOptions(db, { migrate: true }));
  await boss.start();
  try {
    await ensureQueues(boss, queues);
  } finally {
    await boss.stop({ graceful: false, close: false });
  }
}
