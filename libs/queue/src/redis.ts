import { Redis } from 'ioredis';

export type RedisRole = 'worker' | 'producer' | 'subscriber';

/**
 * BullMQ workers and subscribers must wait out a Redis outage (maxRetriesPerRequest: null);
 * producers fail fast instead, because the inbox in Postgres already holds what they enqueue.
 */
export function createRedis(url: string, role: RedisRole, onError?: (error: Error) => void): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: role === 'producer' ? 1 : null,
    enableOfflineQueue: role !== 'producer',
    retryStrategy: (times) => Math.min(2000, 50 * 2 ** Math.min(times, 6)),
    lazyConnect: false,
  });
  redis.on('error', (error: Error) => onError?.(error));
  return redis;
}

/** One connection and a PING, no retries: throws what Redis (or the network) answered within timeoutMs. */
export async function probeRedis(url: string, timeoutMs: number): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  // With no retries the connect rejects with "Connection is closed"; the socket's own error says why.
  let socketError: Error | undefined;
  redis.on('error', (error: Error) => (socketError ??= error));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    await Promise.race([redis.connect().then(() => redis.ping()), deadline]);
  } catch (error) {
    throw socketError ?? error;
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}
