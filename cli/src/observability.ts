import { sql } from 'kysely';
import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db } from '@herald/db';
import { hostname } from 'node:os';
import { bullmqDepth, openQueueTransport } from '@herald/queue';
import type { RunQueue } from '@herald/queue';
import { inboxDepth } from '@herald/session';
import { startOpsServer, watchQueueDepths } from '@herald/telemetry';
import { queueSettings } from './queue-settings.ts';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Puts the queues' depths on this process's /metrics (read at scrape time, not per turn). */
export function watchQueues(db: Db, queues: readonly RunQueue[], shutdown: Shutdown): void {
  const stop = watchQueueDepths(async () => Promise.all([inboxDepth(db), ...queues.map((queue) => bullmqDepth(queue))]));
  shutdown.add('queue depth metrics', stop);
}

/**
 * /metrics, /healthz and /readyz for a role without an API, on HERALD_METRICS_PORT. Ready means
 * its Postgres and Redis answer within two seconds each.
 */
export async function startRoleOpsServer(config: Config, logger: Logger, shutdown: Shutdown, db: Db): Promise<number> {
  const { bus } = openQueueTransport(queueSettings(config), (error) => logger.warn({ err: error }, 'readiness queue store connection error'));
  shutdown.add('readiness queue store', () => bus.close());
  const server = await startOpsServer({
    host: '0.0.0.0',
    port: config.observability.metricsPort,
    checks: {
      postgres: async () => {
        await withTimeout(sql`SELECT 1`.execute(db), 2000, 'postgres');
      },
      [bus.store === 'redis' ? 'redis' : 'queue']: () => bus.ping(2000),
    },
  });
  shutdown.add('metrics server', () => server.close());
  logger.info({ port: server.port }, `metrics and health on port ${server.port}`);
  return server.port;
}

/** This process's heartbeat for `herald status` (one key per role it runs, a SET every 5 s). */
export function startRoleHeartbeat(config: Config, logger: Logger, shutdown: Shutdown, roles: readonly string[]): void {
  const { bus } = openQueueTransport(queueSettings(config), (error) => logger.warn({ err: error }, 'heartbeat queue store connection error'));
  const stop = bus.startHeartbeat(config.redis.queuePrefix, roles, `${hostname()}:${process.pid}`);
  shutdown.add('heartbeat', async () => {
    await stop();
    await bus.close();
  });
}
