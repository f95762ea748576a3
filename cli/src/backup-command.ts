import { resolve } from 'node:path';
import type { Config, Logger } from '@herald/core';
import { assertSameMigrations, ensureDatabase, heraldDataIn, loadBackup, readBackupManifest, RestoreRefusedError, writeBackup } from '@herald/db';
import type { BackupManifest } from '@herald/db';
import { prepareDatabase } from './role-wiring.ts';

/** The counts an operator checks a backup by: the rows people made, not the queues' bookkeeping. */
const SHOWN = ['sessions', 'messages', 'memory_entries', 'skills', 'cron_jobs', 'audit_log'] as const;

function summary(manifest: BackupManifest): string {
  const rows = new Map(manifest.tables.map((table) => [table.name, table.rows]));
  const counts = SHOWN.map((name) => `${rows.get(`public.${name}`) ?? 0} ${name.replace('_', ' ')}`).join(', ');
  return `${counts}; Herald ${manifest.heraldVersion}, migrations up to ${manifest.migrations.at(-1)}`;
}

function fileArgument(args: string[], command: string): string | null {
  const file = args[0];
  if (file === undefined || file.startsWith('-') || args.length > 1) {
    process.stderr.write(`usage: herald ${command} FILE\n`);
    return null;
  }
  return resolve(file);
}

/** `herald backup FILE`: a consistent dump of Herald's data with its manifest (embedded or external Postgres). */
export async function runBackup(args: string[], config: Config): Promise<number> {
  const file = fileArgument(args, 'backup');
  if (file === null) return 2;
  const manifest = await writeBackup(config.database.url, file);
  process.stdout.write(`backup written to ${file}: ${summary(manifest)}\n`);
  return 0;
}

/**
 * `herald restore FILE` into an empty database: the release's migrations first (the backup must
 * come from the same migration set), then every row in one transaction.
 */
export async function runRestore(args: string[], config: Config, logger: Logger): Promise<number> {
  const file = fileArgument(args, 'restore');
  if (file === null) return 2;
  try {
    const manifest = await readBackupManifest(file);
    await assertSameMigrations(manifest);
    await ensureDatabase(config.database.url);
    const found = await heraldDataIn(config.database.url);
    if (found.length > 0) {
      throw new RestoreRefusedError(`the database already holds Herald data (${found.join(', ')}): restore only into an empty database`);
    }
    await prepareDatabase(config, logger, { seedSkills: false });
    const restored = await loadBackup(config.database.url, file);
    process.stdout.write(`restored ${file}: ${summary(restored)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof RestoreRefusedError)) throw error;
    process.stderr.write(`herald restore: ${error.message}\n`);
    return 1;
  }
}
