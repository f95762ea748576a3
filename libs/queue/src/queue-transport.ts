import type { Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedis } from './redis.ts';
import { usesPostgresQueue } from './notice-bus.ts';
import type { NoticeBus, QueueSettings } from './notice-bus.ts';
import { RedisNoticeBus } from './redis-notice-bus.ts';
import { PostgresNoticeBus } from './postgres-notice-bus.ts';
import { PostgresTurnStreamStore, RedisTurnStreamStore } from './turn-stream.ts';
import type { TurnStreamStore } from './turn-stream.ts';
import { createPostgresRunQueue, createPostgresRunWorker, createRunQueue, createRunWorker } from './run-queue.ts';
import type { RunQueue, RunWorker, WakeJob } from './run-queue.ts';

/**
 * The one switch between Redis and Postgres: a role asks its transport for the run queue, a run
 * worker and the notice bus, and never learns which store is behind them.
 */
export interface QueueTransport {
  readonly store: 'redis' | 'postgres';
  readonly bus: NoticeBus;
  /** Where running turns' streams are kept for followers (SSE, chat edits). */
  readonly stream: TurnStreamStore;
  createRunQueue(): RunQueue;
  createRunWorker(processor: Processor<WakeJob, void>, concurrency: number): RunWorker;
  /** Closes the bus and the connections the transport opened (not the queues and workers it made). */
  close(): Promise<void>;
}

export function openQueueTransport(settings: QueueSettings, onError?: (error: Error) => void): QueueTransport {
  if (usesPostgresQueue(settings)) {
    const bus = new PostgresNoticeBus(settings.databaseUrl, onError);
    return {
      store: 'postgres',
      bus,
      stream: new PostgresTurnStreamStore(bus.pool, bus, settings.queuePrefix),
      createRunQueue: () => createPostgresRunQueue(settings.databaseUrl),
      createRunWorker: (processor, concurrency) => createPostgresRunWorker(settings.databaseUrl, processor, concurrency),
      close: () => bus.close(),
    };
  }
  const bus = new RedisNoticeBus(settings.redisUrl, onError);
  const opened: Redis[] = [];
  return {
    store: 'redis',
    bus,
    stream: new RedisTurnStreamStore(bus.connection, settings.queuePrefix),
    createRunQueue: () => createRunQueue(bus.connection, settings.queuePrefix),
    createRunWorker: (processor, concurrency) => {
      // BullMQ workers block on their connection and must wait out an outage: a connection of their own.
      const connection = createRedis(settings.redisUrl, 'worker', onError);
      opened.push(connection);
      return createRunWorker(connection, settings.queuePrefix, processor, concurrency);
    },
    close: async () => {
      for (const connection of opened) connection.disconnect();
      await bus.close();
    },
  };
}
