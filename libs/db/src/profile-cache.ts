import pg from 'pg';
import type { Kysely } from 'kysely';
import { withDefaultUser } from './db.ts';
import type { Database } from './schema.ts';

// A profile's stored hooks, reset rules and models are read for every message and every turn, and change
// a few times in a deployment's life. Each process keeps them in memory and drops a profile's copy
// when Postgres says it changed (docs/decisions/2026-12-02-profile-cache.md): the triggers of
// migrations/0036_profile_cache.sql notify PROFILE_CHANGED_CHANNEL with the profile id when the
// writing transaction commits, and the cache listens on one dedicated connection. A change made
// while no one listened cannot be told, so the cache is trusted only while its LISTEN is live, and
// every (re)connect starts it empty.

/** The NOTIFY channel of migrations/functions/herald_profile_changed.sql; '' names every profile. */
export const PROFILE_CHANGED_CHANNEL = 'herald_profile_changed';
/** How the listener's connection shows in pg_stat_activity. */
export const PROFILE_CACHE_APPLICATION_NAME = 'herald:profile-cache';
/** Profiles are few; past this many (a bug or an attack) the cache starts over rather than grow. Also bounds the shared values. */
const MAX_ENTRIES = 10_000;
const RECONNECT_MAX_MS = 2000;

export interface ProfileSettings {
  /** `profile_hooks.hooks` as stored, [] without a row; @herald/hooks validates it where used. */
  readonly hooks: unknown;
  /** `profiles.session_reset` as stored, [] for an unknown profile; validated where used. */
  readonly sessionReset: unknown;
  /** `profiles.model` as stored (null: the deployment's models); @herald/profiles validates it where used. */
  readonly model: unknown;
}

/** What the cache holds for one profile, read from Postgres: the read-through path and a miss's fill. */
export async function readProfileSettings(db: Kysely<Database>, profileId: string): Promise<ProfileSettings> {
  const row = await db
    .selectFrom('profiles')
    .leftJoin('profile_hooks', 'profile_hooks.profile_id', 'profiles.id')
    .select(['profiles.session_reset', 'profiles.model', 'profile_hooks.hooks'])
    .where('profiles.id', '=', profileId)
    .executeTakeFirst();
  return Object.freeze({
    hooks: row?.hooks ?? [],
    sessionReset: row?.session_reset ?? [],
    model: row?.model ?? null,
  });
}

export interface ProfileCacheOptions {
  db: Kysely<Database>;
  /** The database to listen on (the pool's URL). */
  url: string;
  /** The listener's connection failed or could not be opened; the cache reads through until it is back. */
  onError?: ((error: Error) => void) | undefined;
  /**
   * How often the idle listener's connection is checked with a query. A check that fails, or takes
   * longer than this, drops the connection: a half-open socket would otherwise miss notices unseen.
   * @default 10000
   */
  checkIntervalMs?: number | undefined;
}

/**
 * Per-process copies of each profile's stored hooks and reset rules, invalidated by Postgres
 * LISTEN/NOTIFY. Until `start` has connected, and whenever the listener is down, every `get` reads
 * Postgres and nothing is kept. The process that writes calls `invalidate` after its commit too, so
 * its own next read never waits for the notice.
 */
export class ProfileCache {
  readonly #db: Kysely<Database>;
  readonly #url: string;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #checkIntervalMs: number;
  readonly #entries = new Map<string, ProfileSettings>();
  /** Values about every profile at once (the bindings): dropped by any notice, as '' or a profile's. */
  readonly #shared = new Map<string, unknown>();
  /** Grows on every invalidation and listener change: a read that saw it move keeps nothing. */
  #generation = 0;
  /** Set only while LISTEN is live on it. */
  #client: pg.Client | undefined;
  #stopped = false;
  #failures = 0;
  #started: Promise<void> | undefined;

  constructor(options: ProfileCacheOptions) {
    this.#db = options.db;
    this.#url = options.url;
    this.#onError = options.onError;
    this.#checkIntervalMs = options.checkIntervalMs ?? 10_000;
  }

  /** True while the listener's LISTEN is live, i.e. while cached copies are trusted. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Connects the listener; resolves after the first attempt, and retries in the background if it failed. */
  start(): Promise<void> {
    this.#started ??= this.#connect();
    return this.#started;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const client = this.#client;
    this.#client = undefined;
    this.invalidate();
    await client?.end().catch(() => undefined);
  }

  /** The copy a `get` would answer with now, without reading Postgres; undefined when it would read. */
  cached(profileId: string): ProfileSettings | undefined {
    return this.#client === undefined ? undefined : this.#entries.get(profileId);
  }

  async get(profileId: string): Promise<ProfileSettings> {
    const cached = this.cached(profileId);
    if (cached !== undefined) return cached;
    const generation = this.#generation;
    const settings = await readProfileSettings(this.#db, profileId);
    // A notice that arrived during the read may be about a commit the read did not see, and a read
    // begun before the LISTEN was live may have missed one: either way the generation moved.
    if (this.#client !== undefined && generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(profileId, settings);
    }
    return settings;
  }

  /**
   * A value read across profiles (the bindings, @herald/profiles; a sender's person key,
   * @herald/people; whether any budget is on, @herald/limits), kept like a profile's settings: only
   * while the listener is live, and dropped by every notice, since any profile's change may concern
   * it (migrations/0088_shared_cache_notices.sql makes the people and budget tables notify too).
   * `load` reads Postgres.
   */
  async shared<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (this.#client !== undefined && this.#shared.has(key)) return this.#shared.get(key) as T;
    const generation = this.#generation;
    const value = await load();
    if (this.#client !== undefined && generation === this.#generation) {
      // Keys can come from outside (an identity per sender): past the bound the copies start over.
      if (this.#shared.size >= MAX_ENTRIES) this.#shared.clear();
      this.#shared.set(key, value);
    }
    return value;
  }

  /** Forgets one profile's copy, or every copy when no id (or '') is given. */
  invalidate(profileId?: string): void {
    this.#generation++;
    this.#shared.clear();
    if (profileId === undefined || profileId === '') this.#entries.clear();
    else this.#entries.delete(profileId);
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client({
      connectionString: withDefaultUser(this.#url),
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      application_name: PROFILE_CACHE_APPLICATION_NAME,
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client));
    client.on('notification', (notice) => {
      if (notice.channel === PROFILE_CHANGED_CHANNEL) this.invalidate(notice.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PROFILE_CHANGED_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      this.#onError?.(error as Error);
      this.#reconnectLater();
      return;
    }
    if (this.#stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    // Whatever changed while no one listened is unknown: start from nothing.
    this.invalidate();
    this.#client = client;
    this.#failures = 0;
    this.#checkLater(client);
  }

  #lost(client: pg.Client, error?: Error): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.invalidate();
    if (error !== undefined) this.#onError?.(error);
    client.end().catch(() => undefined);
    this.#reconnectLater();
  }

  #reconnectLater(): void {
    if (this.#stopped) return;
    const delay = Math.min(RECONNECT_MAX_MS, 50 * 2 ** Math.min(this.#failures++, 6));
    setTimeout(() => {
      this.#connect().catch((error: unknown) => this.#onError?.(error as Error));
    }, delay).unref();
  }

  #checkLater(client: pg.Client): void {
    setTimeout(() => {
      if (this.#client !== client) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`profile cache listener: no answer in ${this.#checkIntervalMs} ms`)), this.#checkIntervalMs);
      });
      void Promise.race([client.query('SELECT 1'), late])
        .then(
          () => this.#checkLater(client),
          (error: unknown) => this.#lost(client, error as Error),
        )
        .finally(() => clearTimeout(timer));
    }, this.#checkIntervalMs).unref();
  }
}
