import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** Keys resting after a failure (`<provider>:<VARIABLE>`), and for how long. */
export interface KeyCooldowns {
  /** Milliseconds the key still rests; 0 when it may be used. */
  remainingMs(keyId: string): number;
  coolDown(keyId: string, ms: number, reason: string): void;
}

/** One process's view. */
export class LocalCooldowns implements KeyCooldowns {
  readonly #until = new Map<string, number>();

  remainingMs(keyId: string): number {
    const until = this.#until.get(keyId);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left <= 0) this.#until.delete(keyId);
    return Math.max(0, left);
  }

  /** `reason` is for the shared record; one process needs only the time. */
  coolDown(keyId: string, ms: number, reason?: string): void {
    void reason;
    this.note(keyId, Date.now() + ms);
  }

  /** Keeps the later of what is known and `until`. */
  protected note(keyId: string, until: number): void {
    if (until > (this.#until.get(keyId) ?? 0)) this.#until.set(keyId, until);
  }
}

/** The notices this needs: the process's notice bus (Redis pub/sub or Postgres NOTIFY). */
export interface CooldownNotices {
  publish(channel: string, payload: string): Promise<void>;
  subscribe(channel: string, onNotice: (payload: string) => void): Promise<void>;
}

/**
 * Cool-downs shared by every worker: a key one process saw fail rests for all of them. Each process
 * keeps the set in memory (a model call asks it without a round trip), fills it from
 * `provider_cooldowns` at start, and hears the others' through a notice; a cool-down is written to
 * the table for processes that start later. Best effort: a notice lost costs one call to a resting
 * key, which fails and rests it again.
 */
export class SharedCooldowns extends LocalCooldowns {
  readonly #db: Kysely<Database>;
  readonly #notices: CooldownNotices;
  readonly #channel: string;
  readonly #onError: (error: unknown) => void;

  constructor(options: { db: Kysely<Database>; notices: CooldownNotices; channel: string; onError: (error: unknown) => void }) {
    super();
    this.#db = options.db;
    this.#notices = options.notices;
    this.#channel = options.channel;
    this.#onError = options.onError;
  }

  async start(): Promise<void> {
    await this.#notices.subscribe(this.#channel, (payload) => {
      try {
        const { keyId, until } = JSON.parse(payload) as { keyId?: unknown; until?: unknown };
        if (typeof keyId === 'string' && typeof until === 'number') this.note(keyId, until);
      } catch {
        // not ours
      }
    });
    const rows = await this.#db.selectFrom('provider_cooldowns').select(['key_id', 'until']).where('until', '>', new Date()).execute();
    for (const row of rows) this.note(row.key_id, row.until.getTime());
  }

  override coolDown(keyId: string, ms: number, reason: string): void {
    const until = Date.now() + ms;
    this.note(keyId, until);
    void this.#share(keyId, until, reason).catch(this.#onError);
  }

  async #share(keyId: string, until: number, reason: string): Promise<void> {
    await this.#notices.publish(this.#channel, JSON.stringify({ keyId, until }));
    await this.#db
      .insertInto('provider_cooldowns')
      .values({ key_id: keyId, until: new Date(until), reason })
      .onConflict((oc) => oc.column('key_id').doUpdateSet((eb) => ({ until: eb.fn('greatest', ['provider_cooldowns.until', 'excluded.until']), reason })))
      .execute();
  }
}
