import { once } from 'node:events';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { withDefaultUser } from './db.ts';
import { migrationNames } from './migrate.ts';

/**
 * `herald backup` / `herald restore` without pg_dump (the embedded mode has none on PATH; an
 * operator's pg_dump may not match the server's major version): every table's rows through COPY
 * inside one REPEATABLE READ snapshot, gzipped into one file behind a manifest
 * (docs/decisions/2026-12-05-backups.md). The schema is not in the file: a restore builds it with
 * the same migrations, so a backup restores only with the Herald release (migration set) that made it.
 *
 * The file: line 1 the manifest (JSON); then each table of manifest.tables in order, as COPY text
 * rows (one line per row: COPY escapes newlines) ended by a line `\.`.
 */
export const BACKUP_FORMAT = 'herald-backup-1';

/** Migration bookkeeping and pg-boss's own tables: written again by the restore's migrate step. */
const NOT_DUMPED = new Set(['public.schema_migrations', 'public.schema_functions', 'pgboss.version', 'pgboss.queue']);
/** Rows the migrations themselves insert; replaced by the backup's rows on restore. */
const SEEDED = new Set(['public.profiles', 'public.cron_clock']);
/** The default profile the baseline migration seeds: its presence alone does not make a database "not empty". */
const SEED_PROFILE = 'main';

export interface BackupTable {
  /** schema.name */
  name: string;
  columns: string[];
  rows: number;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  heraldVersion: string;
  createdAt: string;
  postgresVersion: string;
  /** The numbered migrations the database had: a restore needs the same set. */
  migrations: string[];
  tables: BackupTable[];
  sequences: { name: string; value: string; called: boolean }[];
}

/** A restore refused before anything was written (not empty, another release, a bad file). */
export class RestoreRefusedError extends Error {
  override name = 'RestoreRefusedError';
}

/** The release's version, from the repository's package.json (three directories up, as MIGRATIONS_DIR). */
export function heraldVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

const quoteName = (qualified: string) =>
  qualified
    .split('.')
    .map((part) => pg.escapeIdentifier(part))
    .join('.');

interface TableInfo {
  name: string;
  columns: string[];
  /** Tables it references by foreign key (itself left out). */
  references: string[];
  /** A foreign key to itself: its rows go out oldest first, parents before children. */
  selfReferencing: boolean;
  hasCreatedAt: boolean;
}

async function tablesOf(client: pg.ClientBase): Promise<TableInfo[]> {
  const { rows } = await client.query<{ name: string; columns: string[]; refs: string[] | null }>(`
    SELECT n.nspname || '.' || c.relname AS name,
           array_agg(a.attname::text ORDER BY a.attnum) AS columns,
           (SELECT array_agg(DISTINCT fn.nspname || '.' || fc.relname)
              FROM pg_constraint f JOIN pg_class fc ON fc.oid = f.confrelid JOIN pg_namespace fn ON fn.oid = fc.relnamespace
             WHERE f.conrelid = c.oid AND f.contype = 'f') AS refs
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
     WHERE n.nspname IN ('public', 'pgboss') AND c.relkind IN ('r', 'p') AND NOT c.relispartition
     GROUP BY n.nspname, c.relname, c.oid
     ORDER BY 1`);
  return rows
    .filter((row) => !NOT_DUMPED.has(row.name))
    .map((row) => ({
      name: row.name,
      columns: row.columns,
      references: (row.refs ?? []).filter((ref) => ref !== row.name),
      selfReferencing: (row.refs ?? []).includes(row.name),
      hasCreatedAt: row.columns.includes('created_at'),
    }));
}

/** Referenced tables first, so a restore without the right to skip foreign keys still loads. */
function inDependencyOrder(tables: TableInfo[]): TableInfo[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: TableInfo[] = [];
  const seen = new Set<string>();
  const visit = (table: TableInfo) => {
    if (seen.has(table.name)) return;
    seen.add(table.name);
    for (const ref of table.references) {
      const referenced = byName.get(ref);
      if (referenced) visit(referenced);
    }
    ordered.push(table);
  };
  for (const table of tables) visit(table);
  return ordered;
}

function selectOf(table: TableInfo): string {
  const order = table.selfReferencing && table.hasCreatedAt ? ' ORDER BY created_at' : '';
  return `SELECT ${table.columns.map((column) => pg.escapeIdentifier(column)).join(', ')} FROM ${quoteName(table.name)}${order}`;
}

async function write(stream: Writable, chunk: Buffer | string): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

async function sequencesOf(client: pg.ClientBase): Promise<BackupManifest['sequences']> {
  const { rows } = await client.query<{ name: string }>(`SELECT schemaname || '.' || sequencename AS name FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`);
  const sequences: BackupManifest['sequences'] = [];
  for (const { name } of rows) {
    const state = await client.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${quoteName(name)}`);
    sequences.push({ name, value: state.rows[0]!.last_value, called: state.rows[0]!.is_called });
  }
  return sequences;
}

async function manifestOf(client: pg.ClientBase, tables: TableInfo[]): Promise<BackupManifest> {
  const counted: BackupTable[] = [];
  for (const table of tables) {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteName(table.name)}`);
    counted.push({ name: table.name, columns: table.columns, rows: Number(rows[0]!.n) });
  }
  const migrations = (await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).rows.map((row) => row.name);
  const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  return {
    format: BACKUP_FORMAT,
    heraldVersion: heraldVersion(),
    createdAt: new Date().toISOString(),
    postgresVersion: version,
    migrations,
    tables: counted,
    sequences: await sequencesOf(client),
  };
}

/**
 * Writes a consistent backup of the database at `url` to `file` (through `file.partial`, renamed
 * once complete, so a failed run never leaves a file that looks whole). Returns its manifest.
 */
export async function writeBackup(url: string, file: string): Promise<BackupManifest> {
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 5000, application_name: 'herald-backup' });
  await client.connect();
  const partial = `${file}.partial`;
  try {
    // One snapshot for every COPY: rows of different tables agree with each other.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const tables = inDependencyOrder(await tablesOf(client));
    const manifest = await manifestOf(client, tables);
    const gzip = createGzip();
    const out = gzip.pipe(createWriteStream(partial, { mode: 0o600 }));
    await write(gzip, `${JSON.stringify(manifest)}\n`);
    for (const table of tables) {
      for await (const chunk of client.query(copyTo(`COPY (${selectOf(table)}) TO STDOUT`))) await write(gzip, chunk as Buffer);
      await write(gzip, '\\.\n');
    }
    gzip.end();
    await finished(out);
    await client.query('COMMIT');
    await rename(partial, file);
    return manifest;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The lines of a backup file: the manifest first, then the rows. */
function openLines(file: string): AsyncIterableIterator<string> {
  const input = createReadStream(file).pipe(createGunzip());
  return createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
}

function parseManifest(line: string | undefined, file: string): BackupManifest {
  let manifest: BackupManifest | undefined;
  try {
    manifest = JSON.parse(line ?? '') as BackupManifest;
  } catch {
    // not JSON: refused below
  }
  if (manifest?.format !== BACKUP_FORMAT) throw new RestoreRefusedError(`${file} is not a Herald backup (${BACKUP_FORMAT})`);
  return manifest;
}

/** The manifest of a backup file, read without restoring anything. */
export async function readBackupManifest(file: string): Promise<BackupManifest> {
  const lines = openLines(file);
  try {
    return parseManifest((await lines.next()).value as string | undefined, file);
  } catch (error) {
    if (error instanceof RestoreRefusedError) throw error;
    throw new RestoreRefusedError(`${file} is not a Herald backup: ${(error as Error).message}`);
  } finally {
    await lines.return?.();
  }
}

/** Refuses a backup made with another migration set: the schema it restores into would differ. */
export async function assertSameMigrations(manifest: BackupManifest): Promise<void> {
  const here = await migrationNames();
  const had = new Set(manifest.migrations);
  // Names from before the baseline's squash may be recorded too; a name past ours is a newer release.
  const same = here.every((name) => had.has(name)) && manifest.migrations.every((name) => name <= here.at(-1)!);
  if (!same) {
    throw new RestoreRefusedError(
      `the backup was made by Herald ${manifest.heraldVersion} at migration ${manifest.migrations.at(-1)}; this Herald is at ${here.at(-1)}: ` +
        'restore it with the release that made it, then upgrade (herald migrate)',
    );
  }
}

/**
 * What makes the database at `url` not empty: Herald rows in any table beyond what the migrations
 * seed. Empty (or never migrated) gives [].
 */
export async function heraldDataIn(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const migrated = await client.query<{ ok: boolean }>(`SELECT to_regclass('public.schema_migrations') IS NOT NULL AS ok`);
    if (!migrated.rows[0]?.ok) return [];
    const found: string[] = [];
    for (const table of await tablesOf(client)) {
      const seedOnly = table.name === 'public.profiles' ? ` WHERE id <> '${SEED_PROFILE}'` : '';
      if (SEEDED.has(table.name) && seedOnly === '') continue;
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteName(table.name)}${seedOnly}`);
      const count = Number(rows[0]!.n);
      if (count > 0) found.push(`${count} ${table.name.replace(/^public\./, '')}`);
    }
    return found;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Skips triggers (audit rows, notifications: the backup already holds what they wrote) and foreign
 * key checks for this transaction: session_replication_role, as pg_dump's --disable-triggers.
 * A role that may not set it (not a superuser) disables its tables' own triggers instead, which
 * its owner may; foreign keys are then checked, and the dependency order satisfies them.
 */
async function quietTriggers(client: pg.ClientBase, tables: readonly BackupTable[]): Promise<() => Promise<void>> {
  await client.query('SAVEPOINT quiet');
  try {
    await client.query('SET LOCAL session_replication_role = replica');
    return async () => undefined;
  } catch {
    await client.query('ROLLBACK TO SAVEPOINT quiet');
  }
  for (const table of tables) await client.query(`ALTER TABLE ${quoteName(table.name)} DISABLE TRIGGER USER`);
  return async () => {
    for (const table of tables) await client.query(`ALTER TABLE ${quoteName(table.name)} ENABLE TRIGGER USER`);
  };
}

async function copyTable(client: pg.ClientBase, table: BackupTable, lines: AsyncIterableIterator<string>): Promise<void> {
  const columns = table.columns.map((column) => pg.escapeIdentifier(column)).join(', ');
  const stream = client.query(copyFrom(`COPY ${quoteName(table.name)} (${columns}) FROM STDIN`));
  let rows = 0;
  for (;;) {
    const next = await lines.next();
    if (next.done) {
      stream.destroy();
      throw new RestoreRefusedError(`the backup ends inside ${table.name}: the file is truncated`);
    }
    if (next.value === '\\.') break;
    rows += 1;
    await write(stream, `${next.value}\n`);
  }
  stream.end();
  await finished(stream);
  if (rows !== table.rows) throw new RestoreRefusedError(`${table.name}: the backup holds ${rows} rows, its manifest says ${table.rows}`);
}

/**
 * Loads a backup into the database at `url`, which the caller has migrated (the same migration set)
 * and found empty: in one transaction, so a failure leaves it as it was.
 */
export async function loadBackup(url: string, file: string): Promise<BackupManifest> {
  const lines = openLines(file);
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 5000, application_name: 'herald-restore' });
  await client.connect();
  try {
    const manifest = parseManifest((await lines.next()).value as string | undefined, file);
    await client.query('BEGIN');
    const restoreTriggers = await quietTriggers(client, manifest.tables);
    for (const table of manifest.tables) if (SEEDED.has(table.name)) await client.query(`DELETE FROM ${quoteName(table.name)}`);
    for (const table of manifest.tables) await copyTable(client, table, lines);
    for (const sequence of manifest.sequences) await client.query('SELECT setval($1, $2, $3)', [sequence.name, sequence.value, sequence.called]);
    await restoreTriggers();
    await client.query('COMMIT');
    return manifest;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await lines.return?.();
    await client.end().catch(() => undefined);
  }
}
