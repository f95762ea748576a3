import pg from 'pg';
import { withTimeout } from './notice-bus.ts';
import type { NoticeBus } from './notice-bus.ts';

const RECONNECT_MAX_MS = 2000;
/** Postgres truncates application_name past this many bytes. */
const APPLICATION_NAME_BYTES = 63;

/**
 * A connection that outlives outages: it reconnects with backoff and runs `setup` (LISTEN, for
 * instance) on every new connection, because a LISTEN or an application_name belongs to one
 * physical connection.
 */
class DedicatedClient {
  readonly #config: pg.ClientConfig;
  readonly #setup: (client: pg.Client) => Promise<void>;
  readonly #onError: ((error: Error) => void) | undefined;
  #client: pg.Client | undefined;
  #closed = false;
  #failures = 0;

  constructor(config: pg.ClientConfig, setup: (client: pg.Client) => Promise<void>, onError?: (error: Error) => void) {
    this.#config = config;
    this.#setup = setup;
    this.#onError = onError;
  }

  get client(): pg.Client | undefined {
    return this.#client;
  }

  async connect(): Promise<void> {
    const client = new pg.Client({ ...this.#config, keepAlive: true });
    const lost = (error?: Error) => {
      if (error) this.#onError?.(error);
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => undefined);
      this.#reconnectLater();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    await this.#setup(client);
    if (this.#closed) {
      await client.end();
      return;
    }
    this.#client = client;
    this.#failures = 0;
  }

  #reconnectLater(): void {
    if (this.#closed) return;
    const delay = Math.min(RECONNECT_MAX_MS, 50 * 2 ** Math.min(this.#failures++, 6));
    setTimeout(() => {
      if (this.#closed || this.#client) return;
      this.connect().catch((error: unknown) => {
        this.#onError?.(error as Error);
        this.#reconnectLater();
      });
    }, delay).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/**
 * Notices on Postgres LISTEN/NOTIFY, for a deployment without Redis. A process is alive while its
 * heartbeat connection is open: the connection's application_name `<prefix>:alive:<roles>` names
 * its roles, so `aliveRoles` reads pg_stat_activity and a crashed process vanishes at once.
 */
export class PostgresNoticeBus implements NoticeBus {
  readonly store = 'postgres';
  readonly #url: string;
  readonly #pool: pg.Pool;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #handlers = new Map<string, Array<(payload: string) => void>>();
  readonly #dedicated = new Set<DedicatedClient>();
  #listener: DedicatedClient | undefined;
  #listening: Promise<void> | undefined;

  constructor(url: string, onError?: (error: Error) => void) {
    this.#url = url;
    this.#onError = onError;
    this.#pool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 10_000 });
    this.#pool.on('error', (error) => onError?.(error));
  }

  /** The bus's small pool, for the turn stream's own statements. */
  get pool(): pg.Pool {
    return this.#pool;
  }

  async publish(channel: string, payload: string): Promise<void> {
    await this.#pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async subscribe(channel: string, onNotice: (payload: string) => void): Promise<void> {
    this.#handlers.set(channel, [...(this.#handlers.get(channel) ?? []), onNotice]);
    if (!this.#listener) {
      const listener = this.#open({ connectionString: this.#url }, async (client) => {
        client.on('notification', (message) => {
          for (const handler of this.#handlers.get(message.channel) ?? []) handler(message.payload ?? '');
        });
        for (const name of this.#handlers.keys()) await client.query(`LISTEN ${client.escapeIdentifier(name)}`);
      });
      this.#listener = listener;
      this.#listening = listener.connect().catch(async (error: unknown) => {
        this.#listener = undefined;
        await this.#closeDedicated(listener);
        throw error;
      });
    }
    await this.#listening;
    // LISTEN twice is harmless; without a connection right now, the reconnect listens to every
    // channel in #handlers.
    const client = this.#listener?.client;
    if (client) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
  }

  async ping(timeoutMs: number): Promise<void> {
    await withTimeout(this.#pool.query('SELECT 1'), timeoutMs, 'postgres (queue)');
  }

  startHeartbeat(prefix: string, roles: readonly string[], owner: string): () => Promise<void> {
    void owner; // the connection itself is the owner: one per process
    const joined = `${prefix}:alive:${roles.join(',')}`;
    // One connection for all roles when the name fits, else one per role.
    const names = Buffer.byteLength(joined) <= APPLICATION_NAME_BYTES ? [joined] : roles.map((role) => `${prefix}:alive:${role}`);
    const clients = names.map((name) => this.#open({ connectionString: this.#url, application_name: name }, async () => undefined));
    for (const client of clients) client.connect().catch((error: unknown) => this.#onError?.(error as Error));
    return async () => {
      await Promise.all(clients.map((client) => this.#closeDedicated(client)));
    };
  }

  async aliveRoles(prefix: string): Promise<Record<string, number>> {
    const marker = `${prefix}:alive:`;
    const { rows } = await this.#pool.query<{ application_name: string }>(`SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, $1)`, [
      marker,
    ]);
    const counts: Record<string, number> = {};
    for (const { application_name: name } of rows) {
      for (const role of name.slice(marker.length).split(',')) counts[role] = (counts[role] ?? 0) + 1;
    }
    return counts;
  }

  #open(config: pg.ClientConfig, setup: (client: pg.Client) => Promise<void>): DedicatedClient {
    const client = new DedicatedClient(config, setup, this.#onError);
    this.#dedicated.add(client);
    return client;
  }

  async #closeDedicated(client: DedicatedClient): Promise<void> {
    this.#dedicated.delete(client);
    await client.close();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#dedicated].map((client) => this.#closeDedicated(client)));
    await this.#pool.end().catch(() => undefined);
  }
}
