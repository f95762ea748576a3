import type PgBoss from 'pg-boss';
import { CompiledQuery } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** pg-boss keeps its tables in a schema of their own in Herald's database. */
export const JOBS_SCHEMA = 'pgboss';

/**
 * pg-boss's database interface over a Kysely pool or transaction. Given a transaction, whatever
 * pg-boss writes (a sent job, a cancellation) commits or rolls back with it; given the pool, it
 * shares Herald's connections instead of opening a pool of its own.
 */
export function bossDb(executor: Kysely<Database>): PgBoss.Db {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const result = await executor.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as unknown[] };
    },
  };
}

let loading: Promise<typeof PgBoss> | undefined;

/**
 * A pg-boss instance. pg-boss (with the cron parser and date library it brings) is loaded on first
 * use rather than when a process starts: most processes send a job long after they are up.
 */
export async function newBoss(options: PgBoss.ConstructorOptions): Promise<PgBoss> {
  loading ??= import('pg-boss').then((module) => module.default);
  const Boss = await loading;
  const boss = new Boss(options);
  // An unlistened 'error' event would throw; callers that start the boss listen themselves.
  boss.on('error', () => undefined);
  return boss;
}

/** Options every Herald pg-boss instance shares; `schedule` is off (see docs/decisions/2026-12-01-pg-boss.md). */
export function bossOptions(executor: Kysely<Database>, extra: PgBoss.ConstructorOptions = {}): PgBoss.ConstructorOptions {
  return { db: bossDb(executor), schema: JOBS_SCHEMA, schedule: false, supervise: false, migrate: false, ...extra };
}
