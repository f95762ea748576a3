import type { Config } from '@herald/core';
import { withDefaultUser } from '@herald/db';
import type { QueueSettings } from '@herald/queue';

/** The queue store's settings, its Postgres URL naming a user as the rest of Herald's connections do. */
export function queueSettings(config: Pick<Config, 'database' | 'redis'>): QueueSettings {
  return {
    queueMode: config.redis.queueMode,
    redisUrl: config.redis.url,
    databaseUrl: withDefaultUser(config.database.url),
    queuePrefix: config.redis.queuePrefix,
  };
}
