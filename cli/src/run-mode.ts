import { relative } from 'node:path';
import { reconfigured } from '@herald/core';
import type { Config, Logger } from '@herald/core';
import { portAnswers, startEmbeddedPostgres } from './embedded-postgres.ts';

/** Where a first run looks for services already running before it starts its own. */
const LOCAL_POSTGRES = { host: '127.0.0.1', port: 5432 } as const;
const LOCAL_REDIS = { host: '127.0.0.1', port: 6379 } as const;

export interface RunMode {
  /** The config with `auto` settled: database.mode and redis.queueMode say what runs, database.url where. */
  config: Config;
  /** One line for people: which mode runs and how to switch to external services. */
  line: string;
  /** Stops the embedded Postgres when this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

/** `auto` settled without starting anything: external when configured or answering locally. */
export async function settleModes(config: Config): Promise<{ database: 'embedded' | 'external'; queue: 'redis' | 'postgres' }> {
  const database =
    config.database.mode !== 'auto'
      ? config.database.mode
      : config.database.urlGiven || (await portAnswers(LOCAL_POSTGRES.host, LOCAL_POSTGRES.port))
        ? 'external'
        : 'embedded';
  const queue =
    config.redis.queueMode !== 'auto'
      ? config.redis.queueMode
      : config.redis.urlGiven || (await portAnswers(LOCAL_REDIS.host, LOCAL_REDIS.port))
        ? 'redis'
        : 'postgres';
  return { database, queue };
}

function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : `./${rel}`;
}

/** The line `herald up` and `herald doctor` print: what runs, and the two variables that change it. */
export function modeLine(config: Config, modes: { database: 'embedded' | 'external'; queue: 'redis' | 'postgres' }, note?: string): string {
  const where = `data in ${displayPath(config.database.dataDir)}${note ? `; ${note}` : ''}`;
  const database = modes.database === 'embedded' ? `embedded Postgres (${where})` : 'external Postgres (DATABASE_URL)';
  const queue = modes.queue === 'postgres' ? 'queue on Postgres (no Redis)' : 'queue on Redis (REDIS_URL)';
  const both = modes.database === 'external' && modes.queue === 'redis';
  const hint = both
    ? 'HERALD_DATABASE=embedded and HERALD_QUEUE=postgres run without them'
    : 'to use your own services set DATABASE_URL and REDIS_URL (README: "Moving to your own Postgres and Redis")';
  return `mode: ${database}, ${queue}; ${hint}`;
}

/**
 * Settles `auto`, and in embedded mode starts (or joins) the embedded Postgres and points the
 * config at it. Every command that touches the database goes through here first.
 */
export async function enterRunMode(config: Config, logger: Logger): Promise<RunMode> {
  const modes = await settleModes(config);
  let database = { ...config.database, mode: modes.database };
  let stop = async (): Promise<void> => undefined;
  let note: string | undefined;
  if (modes.database === 'embedded') {
    const embedded = await startEmbeddedPostgres(config.database.dataDir, logger);
    database = { ...database, url: embedded.url };
    stop = embedded.stop;
    note = embedded.note;
  }
  const settled = reconfigured(config, { database: Object.freeze(database), redis: Object.freeze({ ...config.redis, queueMode: modes.queue }) });
  return { config: Object.freeze(settled), line: modeLine(config, modes, note), stop };
}
