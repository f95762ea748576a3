import type { Redis } from 'ioredis';
import { createRedis } from './redis.ts';
import { withTimeout } from './notice-bus.ts';
import type { NoticeBus } from './notice-bus.ts';

/** How often a process says it is alive; it counts as gone after three missed beats. */
export const HEARTBEAT_INTERVAL_MS = 5000;
const TTL_SECONDS = Math.ceil((HEARTBEAT_INTERVAL_MS * 3) / 1000);

/**
 * Notices on Redis pub/sub; heartbeats are `<prefix>:alive:<role>:<owner>` keys with a short
 * expiry. The producer connection fails fast (the inbox in Postgres holds what matters); the
 * subscriber connection, opened on the first subscribe, waits out an outage.
 */
export class RedisNoticeBus implements NoticeBus {
  readonly store = 'redis';
  readonly #url: string;
  readonly #producer: Redis;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #handlers = new Map<string, Array<(payload: string) => void>>();
  #subscriber: Redis | undefined;

  constructor(url: string, onError?: (error: Error) => void) {
    this.#url = url;
    this.#onError = onError;
    this.#producer = createRedis(url, 'producer', onError);
  }

  /** The producer connection, for the run queue's own use. */
  get connection(): Redis {
    return this.#producer;
  }

  async publish(channel: string, payload: string): Promise<void> {
    await this.#producer.publish(channel, payload);
  }

  async subscribe(channel: string, onNotice: (payload: string) => void): Promise<void> {
    if (!this.#subscriber) {
      const subscriber = createRedis(this.#url, 'subscriber', this.#onError);
      subscriber.on('message', (from: string, payload: string) => {
        for (const handler of this.#handlers.get(from) ?? []) handler(payload);
      });
      this.#subscriber = subscriber;
    }
    this.#handlers.set(channel, [...(this.#handlers.get(channel) ?? []), onNotice]);
    await this.#subscriber.subscribe(channel);
  }

  async ping(timeoutMs: number): Promise<void> {
    const redis = this.#producer;
    // The producer refuses commands until connected (no offline queue): wait for it first.
    if (redis.status !== 'ready') {
      await withTimeout(new Promise<void>((resolve) => redis.once('ready', () => resolve())), timeoutMs, `redis (${redis.status})`);
    }
    await withTimeout(redis.ping(), timeoutMs, 'redis');
  }

  startHeartbeat(prefix: string, roles: readonly string[], owner: string): () => Promise<void> {
    const keys = roles.map((role) => `${prefix}:alive:${role}:${owner}`);
    const beat = () => {
      const batch = this.#producer.multi();
      for (const key of keys) batch.set(key, String(Date.now()), 'EX', TTL_SECONDS);
      batch.exec().catch(() => undefined);
    };
    beat();
    const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await this.#producer.del(...keys).catch(() => undefined);
    };
  }

  async aliveRoles(prefix: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    let cursor = '0';
    do {
      const [next, keys] = await this.#producer.scan(cursor, 'MATCH', `${prefix}:alive:*`, 'COUNT', 200);
      cursor = next;
      for (const key of keys) {
        const role = key.slice(prefix.length + ':alive:'.length).split(':')[0]!;
        counts[role] = (counts[role] ?? 0) + 1;
      }
    } while (cursor !== '0');
    return counts;
  }

  async close(): Promise<void> {
    this.#producer.disconnect();
    this.#subscriber?.disconnect();
  }
}
