import { sql } from 'kysely';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db } from '@herald/db';
import { createRedis } from '@herald/queue';
import { startOpsServer, watchQueueDepths } from '@herald/telemetry';
import type { QueueDepth } from '@herald/telemetry';

/** The inbox: messages committed in Postgres and not answered yet (the partial open-events index). */
export const INBOX_QUEUE = 'inbox';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function bullmqDepth(queue: Queue): Promise<QueueDepth> {
  const [counts, oldest] = await Promise.all([queue.getJobCounts('wait', 'active', 'delayed', 'failed'), queue.getJobs(['wait'], 0, 0, true)]);
  const first = oldest[0];
  return {
    queue: queue.name,
    waiting: counts.wait ?? 0,
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
    failed: counts.failed ?? 0,
    oldestWaitingSeconds: first ? Math.max(0, (Date.now() - first.timestamp) / 1000) : 0,
  };
}

/** Pending and in-progress inbound messages, and the age of the oldest pending one. */
export async function inboxDepth(db: Db): Promise<QueueDepth> {
  const { rows } = await sql<{ waiting: string; active: string; oldest_seconds: number | null }>`
    SELECT count(*) FILTER (WHERE status = 'pending') AS waiting,
           count(*) FILTER (WHERE status = 'processing') AS active,
           extract(epoch FROM clock_timestamp() - min(received_at) FILTER (WHERE status = 'pending'))::float8 AS oldest_seconds
    FROM inbound_events WHERE status IN ('pending', 'processing')`.execute(db);
  const row = rows[0];
  return {
    queue: INBOX_QUEUE,
    waiting: Number(row?.waiting ?? 0),
    active: Number(row?.active ?? 0),
    delayed: 0,
    failed: 0,
    oldestWaitingSeconds: Math.max(0, row?.oldest_seconds ?? 0),
  };
}

/** Puts the queues' depths on this process's /metrics (read at scrape time, not per turn). */
export function watchQueues(db: Db, queues: readonly Queue[], shutdown: Shutdown): void {
  const stop = watchQueueDepths(async () => Promise.all([inboxDepth(db), ...queues.map((queue) => bullmqDepth(queue))]));
  shutdown.add('queue depth metrics', stop);
}

/**
 * /metrics, /healthz and /readyz for a role without an API, on HERALD_METRICS_PORT. Ready means
 * its Postgres and Redis answer within two seconds each.
 */
export async function startRoleOpsServer(config: Config, logger: Logger, shutdown: Shutdown, db: Db): Promise<number> {
  const redis: Redis = createRedis(config.redisUrl, 'producer', (error) => logger.warn({ err: error }, 'readiness redis connection error'));
  shutdown.add('readiness redis', () => redis.disconnect());
  const server = await startOpsServer({
    host: '0.0.0.0',
    port: config.metricsPort,
    checks: {
      postgres: async () => {
        await withTimeout(sql`SELECT 1`.execute(db), 2000, 'postgres');
      },
      redis: async () => {
        await withTimeout(redis.ping(), 2000, 'redis');
      },
    },
  });
  shutdown.add('metrics server', () => server.close());
  logger.info({ port: server.port }, `metrics and health on port ${server.port}`);
  return server.port;
}
