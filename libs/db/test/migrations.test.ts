import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrate, SCHEMA_COLUMNS } from '@herald/db';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

describe('migrations', () => {
  const database = useTestDatabase();

  it('are safe to run again and from several processes at once', async () => {
    const results = await Promise.all([migrate(database.url), migrate(database.url), migrate(database.url)]);
    for (const result of results) expect(result.applied).toEqual([]);
    const rows = await sql<{ count: string }>`SELECT count(*) FROM schema_migrations`.execute(database.db);
    expect(Number(rows.rows[0]?.count)).toBeGreaterThan(0);
  });

  it('apply concurrently on a fresh database without conflict', async () => {
    const fresh = await createTestDatabase();
    try {
      await sql`DROP SCHEMA public CASCADE; CREATE SCHEMA public`.execute(fresh.db);
      const results = await Promise.all([migrate(fresh.url), migrate(fresh.url)]);
      const applied = results.flatMap((result) => result.applied);
      expect(applied.length).toBeGreaterThan(0);
      expect(new Set(applied).size).toBe(applied.length);
    } finally {
      await fresh.drop();
    }
  });

  it('enable pg_trgm', async () => {
    const rows = await sql<{ extname: string }>`SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'`.execute(database.db);
    expect(rows.rows).toHaveLength(1);
  });

  it('match the Kysely types column for column', async () => {
    const rows = await sql<{ table_name: string; column_name: string }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`.execute(database.db);
    const actual: Record<string, string[]> = {};
    for (const row of rows.rows) (actual[row.table_name] ??= []).push(row.column_name);
    const expected = Object.fromEntries(Object.entries(SCHEMA_COLUMNS).map(([table, columns]) => [table, [...columns].sort()]));
    for (const table of Object.keys(actual)) actual[table]?.sort();
    expect(actual).toEqual(expected);
  });
});
