import { z } from 'zod';
import { integer, url } from './fields.ts';

export interface DatabaseConfig {
  /** May hold a password: never logged, and a config error names DATABASE_URL without its value. */
  url: string;
  /** Postgres connections per process; a turn holds one only while a query runs. */
  poolSize: number;
}

export const databaseSection = z
  .object({
    DATABASE_URL: url(/^postgres(ql)?:$/, 'postgres://user@127.0.0.1:5432/herald').default('postgres://127.0.0.1:5432/herald'),
    HERALD_DB_POOL_SIZE: integer(1, 500).default(10),
  })
  .transform((e): DatabaseConfig => ({ url: e.DATABASE_URL, poolSize: e.HERALD_DB_POOL_SIZE }));
