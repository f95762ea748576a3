import type { Redis } from 'ioredis';
import type pg from 'pg';
import { EventNoticeListener } from './event-notices.ts';
import type { NoticeBus } from './notice-bus.ts';

/**
 * One thing a running turn showed, kept per inbound event so that any ingress replica can follow
 * the turn of an event whichever worker runs it. `delta` is a piece of the model's text placed by
 * step, attempt and offset (libs/agent LoopProgress); `tool` a tool call starting or ending;
 * `compression` the session being compressed before or during the turn (a pause the person should
 * know about: the summary takes a model call of its own).
 */
export type TurnStreamEntry =
  | { type: 'delta'; step: number; attempt: string; offset: number; text: string }
  | { type: 'tool'; name: string; status: 'start' | 'end' | 'error' }
  | { type: 'compression'; status: CompressionStatus };

/** A compression starting, and ending (whether or not it compressed: the reply says when it did not). */
export type CompressionStatus = 'start' | 'done';

export interface StoredStreamEntry {
  /** Increasing within an event's stream: the SSE id a client resumes from. */
  id: string;
  entry: TurnStreamEntry;
}

/** Entries of a stream are kept this long after the last write: long enough to reconnect. */
export const STREAM_TTL_SECONDS = 3600;
const MAX_ENTRIES = 20_000;

/**
 * Where turn streams live: Redis streams, or an unlogged Postgres table without Redis. A view only:
 * losing it loses no reply (the committed reply is the answer), so neither store is durable.
 */
export interface TurnStreamStore {
  append(eventIds: readonly string[], entries: readonly TurnStreamEntry[]): Promise<void>;
  /** Entries after `afterId` (from the start when undefined), oldest first. */
  read(eventId: string, afterId: string | undefined, limit?: number): Promise<StoredStreamEntry[]>;
}

export function turnStreamChannel(prefix: string): string {
  return `${prefix}:turn-stream`;
}

function parseEntry(raw: string): TurnStreamEntry | undefined {
  try {
    const value = JSON.parse(raw) as TurnStreamEntry;
    return typeof value === 'object' && value !== null && typeof value.type === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Redis: one stream per event (`<prefix>:stream:<event>`), trimmed and expiring. `redis` is the
 * notice bus's own connection (RedisNoticeBus.connection): the followers' wake-up is published in
 * the same MULTI as the entries, one round trip per write.
 */
export class RedisTurnStreamStore implements TurnStreamStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(eventId: string): string {
    return `${this.#prefix}:stream:${eventId}`;
  }

  async append(eventIds: readonly string[], entries: readonly TurnStreamEntry[]): Promise<void> {
    if (eventIds.length === 0 || entries.length === 0) return;
    const batch = this.#redis.multi();
    for (const eventId of eventIds) {
      const key = this.#key(eventId);
      for (const entry of entries) batch.xadd(key, 'MAXLEN', '~', MAX_ENTRIES, '*', 'e', JSON.stringify(entry));
      batch.expire(key, STREAM_TTL_SECONDS);
    }
    batch.publish(turnStreamChannel(this.#prefix), JSON.stringify({ eventIds }));
    await batch.exec();
  }

  async read(eventId: string, afterId: string | undefined, limit = 500): Promise<StoredStreamEntry[]> {
    const rows = await this.#redis.xrange(this.#key(eventId), afterId === undefined ? '-' : `(${afterId}`, '+', 'COUNT', limit);
    const out: StoredStreamEntry[] = [];
    for (const [id, fields] of rows) {
      const entry = parseEntry(fields[1] ?? '');
      if (entry) out.push({ id, entry });
    }
    return out;
  }
}

/** Postgres: the unlogged table turn_stream_entries (migrations/0059_turn_stream.sql). */
export class PostgresTurnStreamStore implements TurnStreamStore {
  readonly #pool: pg.Pool;
  readonly #bus: NoticeBus;
  readonly #prefix: string;
  #lastPrune = 0;

  constructor(pool: pg.Pool, bus: NoticeBus, prefix: string) {
    this.#pool = pool;
    this.#bus = bus;
    this.#prefix = prefix;
  }

  async append(eventIds: readonly string[], entries: readonly TurnStreamEntry[]): Promise<void> {
    if (eventIds.length === 0 || entries.length === 0) return;
    const payloads = entries.map((entry) => JSON.stringify(entry));
    await this.#pool.query(
      `INSERT INTO turn_stream_entries (event_id, entry)
       SELECT event_id, entry::jsonb FROM unnest($1::uuid[]) AS event_id CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS e(entry, n)
       ORDER BY event_id, n`,
      [eventIds, payloads],
    );
    await this.#bus.publish(turnStreamChannel(this.#prefix), JSON.stringify({ eventIds }));
    if (Date.now() - this.#lastPrune > 60_000) {
      this.#lastPrune = Date.now();
      await this.#pool.query(`DELETE FROM turn_stream_entries WHERE created_at < now() - make_interval(secs => $1)`, [STREAM_TTL_SECONDS]);
    }
  }

  async read(eventId: string, afterId: string | undefined, limit = 500): Promise<StoredStreamEntry[]> {
    const after = afterId !== undefined && /^\d{1,18}$/.test(afterId) ? afterId : '0';
    const result = await this.#pool.query<{ id: string; entry: TurnStreamEntry }>('SELECT id::text AS id, entry FROM turn_stream_entries WHERE event_id = $1 AND id > $2 ORDER BY id LIMIT $3', [
      eventId,
      after,
      limit,
    ]);
    return result.rows.map((row) => ({ id: row.id, entry: row.entry }));
  }
}

/** Wakes followers of an event when its stream grows, on one shared subscription per process. */
export class TurnStreamListener extends EventNoticeListener {
  constructor(bus: NoticeBus, prefix: string) {
    super(bus, turnStreamChannel(prefix));
  }
}
