import { createServer } from 'node:net';
import type { Config } from '@herald/core';
import { probeDatabase } from '@herald/db';
import { SetupError } from './setup-error.ts';

/**
 * How long a start waits for Postgres or Redis to answer before it names the setting and exits. A
 * reachable server connects in milliseconds even across a region; 3 s leaves the start from source
 * (about 3 s of loading before the check) well inside the 10 s a person waits for the verdict.
 */
export const SERVICE_CHECK_MS = 3000;

/** host:port of a service URL, never its user or password. */
function address(url: string, defaultPort: number): string {
  const parsed = new URL(url);
  return `${parsed.hostname || '127.0.0.1'}:${parsed.port || defaultPort}`;
}

/** What went wrong, in words, from a connection error's code. */
function reason(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code === 'ECONNREFUSED') return 'connection refused (nothing listens there)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ETIMEDOUT' || /timeout|within/i.test(message ?? '')) return `no answer within ${SERVICE_CHECK_MS / 1000} s`;
  return (message ?? String(error)).replace(/\.+$/, '');
}

/** Postgres at DATABASE_URL answers, or a SetupError names DATABASE_URL (within SERVICE_CHECK_MS). */
export async function checkPostgres(url: string): Promise<void> {
  try {
    await probeDatabase(url, SERVICE_CHECK_MS);
  } catch (error) {
    throw new SetupError(`DATABASE_URL: cannot use Postgres at ${address(url, 5432)}: ${reason(error)}. Fix DATABASE_URL, start that Postgres, or unset DATABASE_URL to run an embedded one.`);
  }
}

/** Redis at REDIS_URL answers a PING, or a SetupError names REDIS_URL (within SERVICE_CHECK_MS). */
export async function checkRedis(url: string): Promise<void> {
  try {
    // Loaded only here: @herald/queue brings BullMQ, which a command that touches no Redis never needs.
    // Its loading counts against the wait, so the verdict comes SERVICE_CHECK_MS after the check began.
    const started = performance.now();
    const { probeRedis } = await import('@herald/queue');
    await probeRedis(url, Math.max(1000, SERVICE_CHECK_MS - (performance.now() - started)));
  } catch (error) {
    throw new SetupError(`REDIS_URL: cannot use Redis at ${address(url, 6379)}: ${reason(error)}. Fix REDIS_URL, start that Redis, or set HERALD_QUEUE=postgres to run the queue on Postgres.`);
  }
}

/** The services a command depends on answer: Postgres when external, Redis when the queue is on it. */
export async function checkServices(config: Config, options: { queue: boolean }): Promise<void> {
  const checks: Promise<void>[] = [];
  if (config.database.mode === 'external') checks.push(checkPostgres(config.database.url));
  if (options.queue && config.redis.queueMode === 'redis') checks.push(checkRedis(config.redis.url));
  await Promise.all(checks);
}

/** Whether a TCP port can be listened on at host right now. */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The API's port is free, or a SetupError says so and names PORT, before anything starts. */
export async function checkApiPort(config: Config): Promise<void> {
  const { host, port } = config.api;
  if (port === 0 || (await portFree(host, port))) return;
  throw new SetupError(`PORT: port ${port} on ${host} is in use (another Herald, or another program). Stop it, or set PORT to a free port.`);
}
