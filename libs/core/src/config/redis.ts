import { z } from 'zod';
import { url } from './fields.ts';

export interface RedisConfig {
  url: string;
  /** Prefix of the BullMQ keys and the pub/sub channels, so several Heralds can share one Redis. */
  queuePrefix: string;
}

export const redisSection = z
  .object({
    REDIS_URL: url(/^rediss?:$/, 'redis://127.0.0.1:6379').default('redis://127.0.0.1:6379'),
    HERALD_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/, { error: 'expected letters, digits, _ or -' }).default('herald'),
  })
  .transform((e): RedisConfig => ({ url: e.REDIS_URL, queuePrefix: e.HERALD_QUEUE_PREFIX }));
