import { sql } from 'kysely';
import type { KyselyPlugin } from 'kysely';
import type { Db } from '@herald/db';
import { waitFor } from './wait.ts';

/**
 * Ways for a test to see what happens inside Postgres instead of guessing it from time passing:
 * how often a component has queried a table, and whether a statement is blocked on a lock.
 */

export interface CountedDb {
  /** The same database, counting the statements that name the table. */
  db: Db;
  count(): number;
}

/** Hand `db` to one component to count its statements on `table` (query builder or raw SQL). */
export function countQueries(db: Db, table: string): CountedDb {
  let count = 0;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      // An operation node names its tables, and a raw query holds its text: both show in JSON.
      if (JSON.stringify(args.node).includes(table)) count++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), count: () => count };
}

/** Resolves once some session of this database waits for a lock another transaction holds. */
export async function waitForLockWait(db: Db, what = 'a statement blocked on a lock'): Promise<void> {
  await waitFor(
    async () => {
      const waiting = await sql<{ n: string }>`
        SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
      return Number(waiting.rows[0]?.n) > 0;
    },
    { what },
  );
}
