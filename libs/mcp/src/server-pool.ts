import { backoffMs, sleep } from '@herald/core';
import type { Logger } from '@herald/core';
import type { McpConnection } from './server-connection.ts';

/** First restart delay after a server died; doubles per death in a row, up to RESTART_CAP_MS. */
const RESTART_BASE_MS = 500;
const RESTART_CAP_MS = 30_000;
/** A call waits out this much of a backoff; longer, it fails at once (a session's start never waits on a broken server). */
const MAX_BACKOFF_WAIT_MS = 2000;

interface Entry {
  connection: Promise<McpConnection> | undefined;
  inFlight: number;
  idleTimer: NodeJS.Timeout | undefined;
  /** Deaths (or failed starts) in a row; a call that succeeds clears it. */
  failures: number;
  /** When the next start may happen: now + backoff after a death. */
  notBefore: number;
  /** Closed by us (idle, shutdown): not a death. */
  stopping: boolean;
}

/**
 * The worker's live MCP servers: one connection per key (a profile's server, or a session's when
 * its arguments name the session's workspace), started on first use, stopped after `idleMs`
 * without calls and at shutdown, restarted with backoff after it dies.
 */
export class ServerPool {
  readonly #entries = new Map<string, Entry>();
  readonly #idleMs: number;
  readonly #logger: Logger | undefined;
  #closed = false;

  constructor(options: { idleMs: number; logger?: Logger | undefined }) {
    this.#idleMs = options.idleMs;
    this.#logger = options.logger;
  }

  /** Runs `fn` on the key's connection, starting it (after any backoff) when none is live. */
  async use<T>(key: string, start: () => Promise<McpConnection>, fn: (connection: McpConnection) => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#closed) throw new Error('the worker is shutting down');
    const entry = this.#entry(key);
    entry.inFlight += 1;
    clearTimeout(entry.idleTimer);
    try {
      const connection = await this.#connection(key, entry, start, signal);
      const result = await fn(connection);
      entry.failures = 0;
      return result;
    } finally {
      entry.inFlight -= 1;
      this.#scheduleIdle(key, entry);
    }
  }

  #entry(key: string): Entry {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { connection: undefined, inFlight: 0, idleTimer: undefined, failures: 0, notBefore: 0, stopping: false };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  async #connection(key: string, entry: Entry, start: () => Promise<McpConnection>, signal: AbortSignal): Promise<McpConnection> {
    for (;;) {
      const seen = entry.connection;
      const current = seen ? await seen.catch(() => undefined) : undefined;
      if (current && !current.closed) return current;
      // Another call replaced it meanwhile: use that one rather than starting a second process.
      if (entry.connection !== seen) continue;
      entry.connection = this.#start(key, entry, start, signal);
      return entry.connection;
    }
  }

  async #start(key: string, entry: Entry, start: () => Promise<McpConnection>, signal: AbortSignal): Promise<McpConnection> {
    const wait = entry.notBefore - Date.now();
    if (wait > MAX_BACKOFF_WAIT_MS) {
      throw new Error(`the server failed ${entry.failures} times in a row; it is tried again in ${Math.ceil(wait / 1000)} s`);
    }
    if (wait > 0) await sleep(wait, signal);
    entry.stopping = false;
    let connection: McpConnection;
    try {
      connection = await start();
    } catch (error) {
      this.#died(key, entry, (error as Error).message);
      entry.connection = undefined;
      throw error;
    }
    connection.onClosed((reason) => {
      if (!entry.stopping) this.#died(key, entry, reason);
    });
    return connection;
  }

  #died(key: string, entry: Entry, reason: string): void {
    entry.failures += 1;
    const delay = backoffMs(entry.failures, RESTART_BASE_MS, RESTART_CAP_MS);
    entry.notBefore = Date.now() + delay;
    this.#logger?.warn({ server: key.split('\u0000').slice(1, 2)[0], failures: entry.failures, restartInMs: delay, reason }, 'MCP server stopped unexpectedly');
  }

  #scheduleIdle(key: string, entry: Entry): void {
    if (entry.inFlight > 0 || this.#closed) return;
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => void this.#stop(key, entry), this.#idleMs);
    entry.idleTimer.unref();
  }

  async #stop(key: string, entry: Entry, force = false): Promise<void> {
    if (entry.inFlight > 0 && !force) return;
    const connection = entry.connection;
    entry.stopping = true;
    entry.connection = undefined;
    this.#entries.delete(key);
    const live = await connection?.catch(() => undefined);
    await live?.close();
  }

  /** The process ids of the live stdio servers (tests look for orphans with them). */
  async pids(): Promise<number[]> {
    const pids: number[] = [];
    for (const entry of this.#entries.values()) {
      const live = await entry.connection?.catch(() => undefined);
      if (live && !live.closed && live.pid !== undefined) pids.push(live.pid);
    }
    return pids;
  }

  /** Stops every server; later calls are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      [...this.#entries.entries()].map(([key, entry]) => {
        clearTimeout(entry.idleTimer);
        return this.#stop(key, entry, true);
      }),
    );
  }
}
