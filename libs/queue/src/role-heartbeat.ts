import type { Redis } from 'ioredis';

/** How often a process says it is alive; it counts as gone after three missed beats. */
export const HEARTBEAT_INTERVAL_MS = 5000;
const TTL_SECONDS = Math.ceil((HEARTBEAT_INTERVAL_MS * 3) / 1000);

const keyPattern = (prefix: string) => `${prefix}:alive:*`;

/**
 * Keeps `<prefix>:alive:<role>:<owner>` in Redis with a short expiry while the process runs, so
 * `herald status` can count the live processes of each role. Returns the stop function.
 */
export function startHeartbeat(redis: Redis, prefix: string, roles: readonly string[], owner: string): () => Promise<void> {
  const keys = roles.map((role) => `${prefix}:alive:${role}:${owner}`);
  const beat = () => {
    const batch = redis.multi();
    for (const key of keys) batch.set(key, String(Date.now()), 'EX', TTL_SECONDS);
    batch.exec().catch(() => undefined);
  };
  beat();
  const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await redis.del(...keys).catch(() => undefined);
  };
}

/** The live processes per role, by their heartbeat keys. */
export async function aliveRoles(redis: Redis, prefix: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', keyPattern(prefix), 'COUNT', 200);
    cursor = next;
    for (const key of keys) {
      const role = key.slice(prefix.length + ':alive:'.length).split(':')[0]!;
      counts[role] = (counts[role] ?? 0) + 1;
    }
  } while (cursor !== '0');
  return counts;
}
