import { access, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { apiUserId } from '@herald/core';
import type { Config } from '@herald/core';
import { createDb, createPool } from '@herald/db';
import { openHermesState } from './hermes-import/hermes-state.ts';
import { importHistory } from './hermes-import/import-history.ts';
import type { HistoryReport } from './hermes-import/import-history.ts';
import { importHermesSkills, importMemory } from './hermes-import/import-knowledge.ts';
import type { KnowledgeReport, Skipped } from './hermes-import/import-knowledge.ts';
import { importCron } from './hermes-import/import-cron.ts';
import type { CronReport } from './hermes-import/import-cron.ts';
import { SetupError, usageError } from './setup-error.ts';

export const IMPORT_USAGE = `usage: herald import hermes HERMES_HOME --user ID [--profile P] [--timezone TZ] [--json]

Brings a Hermes install along: sessions and messages from state.db (with lineage and tool calls),
memories/MEMORY.md and memories/USER.md into the person's memory, skills/ with their files, and
cron/jobs.json. --user names the Herald person who owns what is imported (e.g. telegram:42, or an
API user id). Running it again changes nothing.
`;

export interface ImportReport {
  history: HistoryReport | null;
  knowledge: KnowledgeReport;
  cron: CronReport;
}

function fail(message: string): never {
  throw usageError(message, IMPORT_USAGE);
}

export async function runImport(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { user: { type: 'string' }, profile: { type: 'string', default: 'main' }, timezone: { type: 'string', default: 'UTC' }, json: { type: 'boolean', default: false } },
  });
  if (positionals[0] !== 'hermes') fail('import knows one source: hermes');
  const home = positionals[1] ?? fail('import hermes needs the path of a Hermes home (e.g. ~/.hermes)');
  const user = values.user ?? fail('import hermes needs --user: the Herald person who owns the imported history');
  const isDirectory = await stat(resolve(home)).then((found) => found.isDirectory(), () => false);
  if (!isDirectory) throw new SetupError(`HERMES_HOME: ${resolve(home)} is not a directory (the path of a Hermes home, e.g. ~/.hermes)`);
  const report = await importHermesHome(config, resolve(home), { profileId: values.profile, userId: apiUserId(user), timezone: values.timezone });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : describe(report));
}

export async function importHermesHome(
  config: Config,
  home: string,
  target: { profileId: string; userId: string; timezone: string },
): Promise<ImportReport> {
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  const pool = createPool({ url: config.database.url, maxConnections: 1 });
  try {
    const history = await importStateDb(pool, join(home, 'state.db'), target);
    const knowledge: KnowledgeReport = { memory: { imported: 0, alreadyThere: 0, skipped: [] }, skills: { imported: [], alreadyThere: [], skipped: [] } };
    await importMemory(db, home, target.profileId, target.userId, knowledge);
    await importHermesSkills(db, home, target.profileId, knowledge);
    const cron = await importCron(db, home, target.profileId, target.userId, target.timezone);
    return { history, knowledge, cron };
  } finally {
    await db.destroy();
    await pool.end();
  }
}

async function importStateDb(pool: ReturnType<typeof createPool>, path: string, target: { profileId: string; userId: string }): Promise<HistoryReport | null> {
  try {
    await access(path);
  } catch {
    return null;
  }
  const state = await openHermesState(path);
  const client = await pool.connect();
  try {
    process.stderr.write(`reading ${path}\n`);
    return await importHistory(client, state, {
      ...target,
      onProgress: (message) => process.stderr.write(`  ${message}\n`),
    });
  } finally {
    client.release();
    state.close();
  }
}

function skippedLines(skipped: Skipped[]): string {
  return skipped.map((entry) => `    skipped ${entry.what}: ${entry.why}\n`).join('');
}

function describe(report: ImportReport): string {
  const { history, knowledge, cron } = report;
  const lines = [
    history === null
      ? 'sessions: no state.db in that home'
      : `sessions: ${history.sessions.imported} imported, ${history.sessions.alreadyThere} already there\n` +
        `messages: ${history.messages.imported} imported, ${history.messages.alreadyThere} already there` +
        Object.entries(history.messages.skipped).map(([why, n]) => `\n    skipped ${n}: ${why}`).join('') +
        (history.searchIndexes === 'rebuilt' ? '\n    search indexes built once after the rows' : ''),
    `memory entries: ${knowledge.memory.imported} imported, ${knowledge.memory.alreadyThere} already there\n${skippedLines(knowledge.memory.skipped)}`.trimEnd(),
    `skills: ${knowledge.skills.imported.length} imported, ${knowledge.skills.alreadyThere.length} unchanged\n${skippedLines(knowledge.skills.skipped)}`.trimEnd(),
    `cron jobs: ${cron.imported.length} imported, ${cron.alreadyThere.length} already there\n${skippedLines(cron.skipped)}`.trimEnd(),
  ];
  return `${lines.join('\n')}\n`;
}
