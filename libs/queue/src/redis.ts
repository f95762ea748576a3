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
