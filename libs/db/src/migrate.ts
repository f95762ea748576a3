import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { withDefaultUser } from './db.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

// An arbitrary constant shared by every Herald process: two migrators never interleave.
const MIGRATION_LOCK_ID = 4_237_001;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies the ordered SQL files in `migrations/` that are not yet recorded, each in its own
 * transaction, under a session advisory lock so concurrent starts are safe. Idempotent.
 */
export async function migrate(
  url: string,
  options: { dir?: string; onApply?: (name: string) => void } = {},
): Promise<MigrationResult> {
  const dir = options.dir ?? MIGRATIONS_DIR;
  const files = (await readdir(dir)).filter((name) => /^\d+_.+\.sql$/.test(name)).sort();
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      const text = await readFile(`${dir}/${name}`, 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(text);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(name);
      options.onApply?.(name);
    }
    return { applied, alreadyApplied: done.size };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}
