import { Kysely, PostgresDialect, sql } from 'kysely';
import { userInfo } from 'node:os';
import pg from 'pg';
import type { Database } from './schema.ts';

// int8 (bigserial ids, counters) as JS numbers would silently lose precision past 2^53; we keep
// them as strings in the types (BigIntColumn) and pg's default already returns strings.

export interface DbOptions {
  url: string;
  maxConnections?: number;
  /** Called when an idle pooled connection fails (e.g. Postgres restarted); the pool recovers. */
  onError?: (error: Error) => void;
}

/**
 * Fills in the operating-system user when the URL names none, as psql does; pg would otherwise
 * rely on $USER, which containers and CI often leave unset.
 */
export function withDefaultUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username !== '') return url;
  parsed.username = encodeURIComponent(userInfo().username);
  return parsed.toString();
}

export function createPool(options: DbOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: withDefaultUser(options.url),
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // Without listeners a dropped connection (pg_terminate_backend, a restart) is an uncaught
  // 'error' event that kills the process: idle clients report through the pool, checked-out
  // clients (mid-transaction) through their own emitter. The failing query rejects either way.
  pool.on('error', (error) => options.onError?.(error));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onError?.(error));
  });
  return pool;
}

export function createDb(options: DbOptions): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPool(options) }) });
}

export type Db = Kysely<Database>;

/**
 * Creates the database named in `url` when it does not exist yet, so a fresh machine needs no
 * manual setup. Connects to the `postgres` maintenance database to do it.
 */
export async function ensureDatabase(url: string): Promise<'exists' | 'created'> {
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    return 'exists';
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const maintenance = new URL(withDefaultUser(url));
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } catch (error) {
    // Two processes starting at once: the other one created it first.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await admin.end();
  }
  return 'created';
}

/**
 * Connects once and disconnects: throws what the server (or the network) answered within
 * timeoutMs. A database not created yet counts as reachable (migrate creates it).
 */
export async function probeDatabase(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: timeoutMs });
  // A failed connect also emits 'error'; the rejection below carries it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One round trip on the pool: what a readiness check asks of Postgres. */
export async function pingDb(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
