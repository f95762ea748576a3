import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { withDefaultUser } from './db.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

// An arbitrary constant shared by every Herald process: two migrators never interleave.
const MIGRATION_LOCK_ID = 4_237_001;

/** The squash of the first round's numbered files; see recogniseLegacy. */
const BASELINE = '0001_baseline.sql';
/** The last numbered file before the squash: a database that has it is at the baseline's schema. */
const LEGACY_LAST = '0011_completion_function.sql';

export interface MigrationResult {
  /** Numbered files applied by this run. */
  applied: string[];
  /** SQL functions (re)created by this run because their file is new or changed. */
  functions: string[];
  alreadyApplied: number;
}

export interface MigrateOptions {
  dir?: string;
  onApply?: (name: string) => void;
}

interface SqlFile {
  name: string;
  text: string;
  checksum: string;
}

/**
 * Brings the database to the files in `migrations/`, under a session advisory lock so concurrent
 * starts are safe, in one transaction: every function file under functions/ whose checksum
 * changed, then the numbered files not yet recorded. Numbered files hold tables, columns and
 * indexes and never change once shipped; a function lives once, in its own file, and is edited in
 * place. Functions go first with check_function_bodies off (as pg_dump restores), so a generated
 * column of a numbered file can use a function and a function body can name a table a later file
 * creates. Idempotent.
 */
export async function migrate(url: string, options: MigrateOptions = {}): Promise<MigrationResult> {
  const dir = options.dir ?? MIGRATIONS_DIR;
  const [numbered, functions] = await Promise.all([readNumbered(dir), readFunctions(join(dir, 'functions'))]);
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await ensureBookkeeping(client);
    await recogniseLegacy(client);
    const done = await namesIn(client, 'SELECT name FROM schema_migrations');
    const checksums = await checksumsOf(client);
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL check_function_bodies = off');
      const changed = functions.filter((file) => checksums.get(file.name) !== file.checksum);
      for (const file of changed) await applyFunction(client, file);
      const pending = numbered.filter((file) => !done.has(file.name));
      for (const file of pending) await applyNumbered(client, file);
      await client.query('COMMIT');
      for (const file of [...changed, ...pending]) options.onApply?.(file.name);
      return { applied: pending.map((f) => f.name), functions: changed.map((f) => f.name), alreadyApplied: done.size };
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}

/** The numbered migration files of this release, in order. */
export async function migrationNames(dir: string = MIGRATIONS_DIR): Promise<string[]> {
  return (await readdir(dir)).filter((name) => /^\d+_.+\.sql$/.test(name)).sort();
}

async function readNumbered(dir: string): Promise<SqlFile[]> {
  const names = await migrationNames(dir);
  return Promise.all(names.map((name) => readSql(dir, name, name)));
}

/** functions/<name>.sql, keyed by the function's name (the file name without .sql). */
async function readFunctions(dir: string): Promise<SqlFile[]> {
  const names = (await readdir(dir)).filter((name) => /^[a-z_][a-z0-9_]*\.sql$/.test(name)).sort();
  return Promise.all(names.map((name) => readSql(dir, name, name.slice(0, -'.sql'.length))));
}

async function readSql(dir: string, file: string, name: string): Promise<SqlFile> {
  const text = await readFile(join(dir, file), 'utf8');
  return { name, text, checksum: createHash('sha256').update(text).digest('hex') };
}

async function ensureBookkeeping(client: pg.Client): Promise<void> {
  await client.query(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       name text PRIMARY KEY,
       applied_at timestamptz NOT NULL DEFAULT now()
     );
     CREATE TABLE IF NOT EXISTS schema_functions (
       name text PRIMARY KEY,
       checksum text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
}

/**
 * A database migrated by the first round's numbered files (0001_spine.sql .. 0011) has exactly
 * the baseline's tables: it is recorded as at the baseline, and its functions are re-created from
 * their files on this run (no checksum is recorded for them yet). A database stopped part-way
 * through those files is refused rather than guessed at.
 */
async function recogniseLegacy(client: pg.Client): Promise<void> {
  const done = await namesIn(client, 'SELECT name FROM schema_migrations');
  if (done.size === 0 || done.has(BASELINE)) return;
  if (!done.has(LEGACY_LAST)) {
    throw new Error(`the database is at a schema older than ${LEGACY_LAST} (${[...done].sort().at(-1)}); ` + 'upgrade it with a Herald release from 2026-11-30 first, then run herald migrate again');
  }
  await client.query('INSERT INTO schema_migrations (name) VALUES ($1) ON CONFLICT DO NOTHING', [BASELINE]);
}

async function namesIn(client: pg.Client, query: string): Promise<Set<string>> {
  return new Set((await client.query<{ name: string }>(query)).rows.map((row) => row.name));
}

async function checksumsOf(client: pg.Client): Promise<Map<string, string>> {
  const rows = (await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_functions')).rows;
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

/**
 * Overloads of the function that nothing depends on are dropped first, so a changed signature
 * leaves no stale copy behind; one that a generated column or trigger uses stays and is replaced
 * in place (CREATE OR REPLACE refuses a signature change there, which is the right failure).
 */
async function applyFunction(client: pg.Client, file: SqlFile): Promise<void> {
  try {
    const stale = await client.query<{ signature: string }>(
      `SELECT p.oid::regprocedure::text AS signature
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = current_schema() AND p.proname = $1
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.refobjid = p.oid AND d.deptype = 'n')`,
      [file.name],
    );
    for (const row of stale.rows) await client.query(`DROP FUNCTION ${row.signature}`);
    await client.query(file.text);
    await client.query(
      `INSERT INTO schema_functions (name, checksum) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`,
      [file.name, file.checksum],
    );
  } catch (error) {
    throw new Error(`function file functions/${file.name}.sql failed: ${(error as Error).message}`, { cause: error });
  }
}

async function applyNumbered(client: pg.Client, file: SqlFile): Promise<void> {
  try {
    await client.query(file.text);
    await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file.name]);
  } catch (error) {
    throw new Error(`migration ${file.name} failed: ${(error as Error).message}`, { cause: error });
  }
}
