import type { Config, Logger, Shutdown } from '@herald/core';
import { pingDb } from '@herald/db';
import type { Db } from '@herald/db';
import { hostname } from 'node:os';
import { bullmqDepth, openQueueTransport } from '@herald/queue';
import type { RunQueue } from '@herald/queue';
import { inboxDepth } from '@herald/inbox';
import { startOpsServer, watchQueueDepths } from '@herald/telemetry';
import type { OpsServer } from '@herald/telemetry';
import { SetupError } from './setup-error.ts';
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

/** How many ports after the default one a role tries when its siblings on this host hold them. */
const METRICS_PORT_TRIES = 32;

type OpsOptions = Parameters<typeof startOpsServer>[0];

/**
 * Listens on HERALD_METRICS_PORT; when that is the default and a sibling role on this host holds
 * it, on the next free port (so any number of roles start side by side with nothing set). A port
 * set explicitly and in use is an error naming the setting.
 */
async function listenOps(config: Config, options: Omit<OpsOptions, 'host' | 'port'>): Promise<{ server: OpsServer; note: string }> {
  const { metricsHost: host, metricsPort: first, metricsPortGiven } = config.observability;
  const tries = metricsPortGiven || first === 0 ? 1 : METRICS_PORT_TRIES;
  for (let port = first; port < first + tries; port += 1) {
    try {
      const server = await startOpsServer({ ...options, host, port });
      return { server, note: port === first ? '' : ` (${first} is in use on this host)` };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
  throw new SetupError(
    metricsPortGiven
      ? `HERALD_METRICS_PORT: port ${first} on ${host} is in use. Set HERALD_METRICS_PORT to a free port, or 0 for any.`
      : `HERALD_METRICS_PORT: ports ${first} to ${first + tries - 1} on ${host} are all in use. Set HERALD_METRICS_PORT to a free port, or 0 for any.`,
  );
}

/**
 * /metrics, /healthz and /readyz for a role without an API, on HERALD_METRICS_HOST (loopback by
 * default) and HERALD_METRICS_PORT. Ready means its Postgres and Redis answer within two seconds
 * each. Returns where it listens, for the role's start line.
 */
export async function startRoleOpsServer(config: Config, logger: Logger, shutdown: Shutdown, db: Db): Promise<string> {
  const { bus } = openQueueTransport(queueSettings(config), (error) => logger.warn({ err: error }, 'readiness queue store connection error'));
  shutdown.add('readiness queue store', () => bus.close());
  const { server, note } = await listenOps(config, {
    checks: {
      postgres: async () => {
        await withTimeout(pingDb(db), 2000, 'postgres');
      },
      [bus.store === 'redis' ? 'redis' : 'queue']: () => bus.ping(2000),
    },
  });
  shutdown.add('metrics server', () => server.close());
  const where = `port ${server.port} at ${config.observability.metricsHost}${note}`;
  logger.info({ port: server.port, host: config.observability.metricsHost }, `metrics and health on ${where}`);
  return where;
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
