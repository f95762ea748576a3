/**
 * Which store carries the run queue and the notices between processes: Redis (the default with a
 * Redis to talk to) or Postgres (BullMQ's Postgres backend and LISTEN/NOTIFY), so a first run needs
 * nothing but Postgres. `auto` is settled by the command before anything opens a connection; a
 * library given `auto` treats it as Redis, the historic default.
 */
export type QueueMode = 'auto' | 'redis' | 'postgres';

export interface QueueSettings {
  queueMode: QueueMode;
  redisUrl: string;
  databaseUrl: string;
  queuePrefix: string;
}

export const usesPostgresQueue = (settings: Pick<QueueSettings, 'queueMode'>): boolean => settings.queueMode === 'postgres';

/**
 * What processes tell each other besides the run queue: best-effort notices on named channels
 * (turn-done, session-control) and which roles are alive. One implementation per store; callers
 * never see which.
 */
export interface NoticeBus {
  readonly store: 'redis' | 'postgres';
  publish(channel: string, payload: string): Promise<void>;
  /** Delivers every later notice on the channel to `onNotice`; resolves once subscribed. */
  subscribe(channel: string, onNotice: (payload: string) => void): Promise<void>;
  /** Rejects when the store does not answer within `timeoutMs`. */
  ping(timeoutMs: number): Promise<void>;
  /** Says this process runs these roles until the returned function is called (or the process dies). */
  startHeartbeat(prefix: string, roles: readonly string[], owner: string): () => Promise<void>;
  /** The live processes per role. */
  aliveRoles(prefix: string): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
