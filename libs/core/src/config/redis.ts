import { z } from 'zod';
import { oneOf, url } from './fields.ts';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface RedisConfig {
  url: string;
  /** Prefix of the BullMQ keys and the pub/sub channels, so several Heralds can share one Redis. */
  queuePrefix: string;
  /**
   * HERALD_QUEUE: where the run queue and notices live; `postgres` is BullMQ's Postgres backend with
   * LISTEN/NOTIFY; `auto` (the default) is Redis when REDIS_URL is set or the local Redis answers.
   */
  queueMode: 'auto' | 'redis' | 'postgres';
  /** Whether REDIS_URL was set, rather than defaulted (what `auto` looks at first). */
  urlGiven: boolean;
}

export const redisSection = z
  .object({
    REDIS_URL: url(/^rediss?:$/, 'redis://127.0.0.1:6379').optional(),
    HERALD_QUEUE_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, { error: 'expected letters, digits, _ or -' })
      .default('herald'),
    HERALD_QUEUE: oneOf(['auto', 'redis', 'postgres']).default('auto'),
  })
  .transform((e): RedisConfig => ({
    url: e.REDIS_URL ?? DEFAULT_REDIS_URL,
    queuePrefix: e.HERALD_QUEUE_PREFIX,
    queueMode: e.HERALD_QUEUE,
    urlGiven: e.REDIS_URL !== undefined,
  }));
