import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, MIGRATIONS_DIR } from '@herald/db';
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

  it('re-create a function whose file changed, dropping its old signature, and leave the others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'herald-migrations-'));
    const fresh = await createTestDatabase();
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      const file = join(dir, 'functions', 'herald_cron_now.sql');
      const text = await readFile(file, 'utf8');
      await writeFile(file, text.replace('herald_cron_now()', 'herald_cron_now(p_extra_ms bigint DEFAULT 0)'));
      const result = await migrate(fresh.url, { dir });
      expect(result).toMatchObject({ applied: [], functions: ['herald_cron_now'] });
      const rows = await sql<{ signature: string }>`
        SELECT oid::regprocedure::text AS signature FROM pg_proc WHERE proname = 'herald_cron_now'`.execute(fresh.db);
      expect(rows.rows.map((row) => row.signature)).toEqual(['herald_cron_now(bigint)']);
      expect((await migrate(fresh.url, { dir })).functions).toEqual([]);
    } finally {
      await fresh.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
