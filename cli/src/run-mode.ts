import { relative } from 'node:path';
import type { Config, Logger } from '@herald/core';
import { reconfigured } from '@herald/core';
import { portAnswers, startEmbeddedPostgres } from './embedded-postgres.ts';

/** Where a local Postgres usually listens: named in the mode line when one answers but is not used. */
const LOCAL_POSTGRES = { host: '127.0.0.1', port: 5432 } as const;

export interface RunMode {
  /** The config with `auto` settled: database.mode and redis.queueMode say what runs, database.url where. */
  config: Config;
  /** One line for people: which mode runs, why, and how to switch. */
  line: string;
  /** Stops the embedded Postgres when this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

export interface Modes {
  database: 'embedded' | 'external';
  queue: 'redis' | 'postgres';
  /** Why each was chosen, in words (which setting said so, or which was not set). */
  why: { database: string; queue: string };
}

/**
 * `auto` settled from what the person set, never from what happens to answer on this machine: a
 * local Postgres or Redis is used only when DATABASE_URL / REDIS_URL (or HERALD_DATABASE=external,
 * HERALD_QUEUE=redis) say so, `herald init` writing them into .env included
 * (docs/decisions/2026-12-05-run-mode-chosen-openly.md).
 */
export function settleModes(config: Config): Modes {
  const { mode, urlGiven } = config.database;
  const database = mode === 'auto' ? (urlGiven ? 'external' : 'embedded') : mode;
  const queueMode = config.redis.queueMode;
  const queue = queueMode === 'auto' ? (config.redis.urlGiven ? 'redis' : 'postgres') : queueMode;
  const databaseWhy =
    mode !== 'auto' ? `HERALD_DATABASE=${mode}${mode === 'external' && !urlGiven ? ' without DATABASE_URL: the local default' : ''}` : urlGiven ? 'DATABASE_URL is set' : 'DATABASE_URL is not set';
  const queueWhy = queueMode !== 'auto' ? `HERALD_QUEUE=${queueMode}` : config.redis.urlGiven ? 'REDIS_URL is set' : 'REDIS_URL is not set';
  return { database, queue, why: { database: databaseWhy, queue: queueWhy } };
}

function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : `./${rel}`;
}

/** host:port/database of a Postgres URL, never its user or password. */
function postgresAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

/** The line `herald up` and `herald doctor` print: what runs, why, and the variables that change it. */
export function modeLine(config: Config, modes: Modes, localPostgresAnswers = false, note?: string): string {
  const where = `data in ${displayPath(config.database.dataDir)}${note ? `; ${note}` : ''}`;
  const database = modes.database === 'embedded' ? `embedded Postgres (${where})` : `external Postgres at ${postgresAddress(config.database.url)}`;
  const queue = modes.queue === 'postgres' ? 'queue on Postgres (no Redis)' : 'queue on Redis (REDIS_URL)';
  const both = modes.database === 'external' && modes.queue === 'redis';
  const hint = both
    ? 'HERALD_DATABASE=embedded and HERALD_QUEUE=postgres run without them'
    : 'to use your own services set DATABASE_URL and REDIS_URL (README: "Moving to your own Postgres and Redis")';
  const local =
    modes.database === 'embedded' && config.database.mode === 'auto' && localPostgresAnswers
      ? `; a Postgres answers on ${LOCAL_POSTGRES.host}:${LOCAL_POSTGRES.port} but is not used unless you set DATABASE_URL (or HERALD_DATABASE=external)`
      : '';
  return `mode: ${database}, ${queue}; ${hint}; chosen because ${modes.why.database} and ${modes.why.queue}${local}`;
}

/** Whether the usual local Postgres answers: said in the mode line, never acted on. */
export function localPostgresAnswers(): Promise<boolean> {
  return portAnswers(LOCAL_POSTGRES.host, LOCAL_POSTGRES.port, 300);
}

/**
 * Settles `auto`, and in embedded mode starts (or joins) the embedded Postgres and points the
 * config at it. Every command that touches the database goes through here first.
 */
export async function enterRunMode(config: Config, logger: Logger): Promise<RunMode> {
  const modes = settleModes(config);
  let database = { ...config.database, mode: modes.database };
  let stop = async (): Promise<void> => undefined;
  const local = modes.database === 'embedded' && config.database.mode === 'auto' ? await localPostgresAnswers() : false;
  let note: string | undefined;
  if (modes.database === 'embedded') {
    const embedded = await startEmbeddedPostgres(config.database.dataDir, logger);
    database = { ...database, url: embedded.url };
    stop = embedded.stop;
    note = embedded.note;
  }
  const settled = reconfigured(config, { database: Object.freeze(database), redis: Object.freeze({ ...config.redis, queueMode: modes.queue }) });
  return { config: Object.freeze(settled), line: modeLine(config, modes, local, note), stop };
}
