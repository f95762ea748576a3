import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '@herald/core';
import { createDb, ensureDatabase, migrate, withDefaultUser } from '@herald/db';
import type { Db } from '@herald/db';
import { prepareJobs } from '@herald/jobs';
import { jobQueues } from '@herald/cli';

export const ADMIN_URL = process.env.HERALD_TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  db: Db;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database per test file (pg-boss's schema and Herald's queues included, as
 * `herald migrate` leaves it): real Postgres, nothing shared between files.
 */
export async function createTestDatabase(adminUrl: string = ADMIN_URL): Promise<TestDatabase> {
  const name = `herald_t_${randomBytes(5).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString());
  const db = createDb({ url: url.toString(), maxConnections: 3 });
  await prepareJobs(db, jobQueues(loadConfig({})));
  return {
    url: url.toString(),
    name,
    db,
    async drop() {
      await db.destroy();
      const admin = new pg.Client({ connectionString: withDefaultUser(adminUrl) });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

export function uniquePrefix(): string {
  return `herald_t_${randomBytes(4).toString('hex')}`;
}
