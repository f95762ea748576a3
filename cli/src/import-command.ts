import { lstat, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { apiUserId, CHAT_PLATFORMS } from '@herald/core';
import type { Config } from '@herald/core';
import { createPool } from '@herald/db';
import { isValidTimeZone } from '@herald/cron';
import { HomeError } from './hermes-import/home-error.ts';
import { openHermesState } from './hermes-import/hermes-state.ts';
import type { HermesState } from './hermes-import/hermes-state.ts';
import { importHistory, settleIndexes } from './hermes-import/import-history.ts';
import type { HistoryReport } from './hermes-import/import-history.ts';
import { importHermesSkills, importMemory, readMemoryFiles } from './hermes-import/import-knowledge.ts';
import type { KnowledgeReport, MemoryFile } from './hermes-import/import-knowledge.ts';
import { importCron, readJobs } from './hermes-import/import-cron.ts';
import type { CronReport } from './hermes-import/import-cron.ts';
import { homeTimezone } from './hermes-import/home-config.ts';
import { withSingleClient } from './hermes-import/single-client.ts';
import { summarise } from './hermes-import/import-summary.ts';
import type { ImportSummary } from './hermes-import/import-summary.ts';
import { UnsafeFileError } from './safe-files.ts';
import { readSkillTree } from './skill-tree.ts';
import type { SkillTree } from './skill-tree.ts';
import { SetupError, usageError } from './setup-error.ts';

export const IMPORT_USAGE = `usage: herald import hermes HERMES_HOME --user ID [--profile P] [--timezone TZ] [--json]

Brings a Hermes install along: sessions and messages from state.db (with lineage, tool calls,
titles, models, usage and reasoning), memories/MEMORY.md and memories/USER.md into the person's
memory, skills/ with their files and categories, and cron/jobs.json. --user names the Herald person
who owns what is imported (e.g. ${CHAT_PLATFORMS[0]}:42, or an API user id). Cron times are read in --timezone,
else HERMES_TIMEZONE, else the home's config.yaml timezone, else UTC. The whole home is imported in
one transaction: a failure leaves nothing behind. Running it again changes nothing.
`;

export interface ImportReport {
  history: HistoryReport | null;
  knowledge: KnowledgeReport;
  cron: CronReport;
  timezone: { zone: string; from: string };
  /** Upstream fields Herald has no place for, with how many rows or jobs held one. */
  unplaced: Record<string, number>;
  summary: ImportSummary;
}

export interface ImportTarget {
  profileId: string;
  userId: string;
  /** --timezone; undefined: HERMES_TIMEZONE, then the home's config.yaml, then UTC. */
  timezone?: string | undefined;
  /** HERMES_TIMEZONE as the importing shell has it. */
  envTimezone?: string | undefined;
}

function fail(message: string): never {
  throw usageError(message, IMPORT_USAGE);
}

export async function runImport(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { user: { type: 'string' }, profile: { type: 'string', default: 'main' }, timezone: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals[0] !== 'hermes') fail('import knows one source: hermes');
  const home = positionals[1] ?? fail('import hermes needs the path of a Hermes home (e.g. ~/.hermes)');
  const user = values.user ?? fail('import hermes needs --user: the Herald person who owns the imported history');
  const isDirectory = await stat(resolve(home)).then(
    (found) => found.isDirectory(),
    () => false,
  );
  if (!isDirectory) throw new SetupError(`HERMES_HOME: ${resolve(home)}: no such directory (the path of a Hermes home, e.g. ~/.hermes)`);
  if (values.timezone !== undefined && !isValidTimeZone(values.timezone)) fail(`--timezone ${values.timezone} is not an IANA time zone (e.g. Europe/Berlin)`);
  try {
    const report = await importHermesHome(config, resolve(home), {
      profileId: values.profile,
      userId: apiUserId(user),
      timezone: values.timezone,
      envTimezone: process.env.HERMES_TIMEZONE,
    });
    process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : describe(report));
  } catch (error) {
    if (!(error instanceof HomeError || error instanceof UnsafeFileError)) throw error;
    process.stderr.write(`herald: import refused, nothing was written: ${error.message}\n`);
    process.exitCode = 1;
  }
}

/** Everything read from the home before the first write: a malformed home is refused here, whole. */
interface ReadHome {
  state: HermesState | null;
  memory: MemoryFile[];
  skills: SkillTree;
  jobs: unknown[];
  timezone: { zone: string; from: string };
}

/** The skill tree, or nothing when the home has none; a skills folder that is a link is reported, not followed. */
async function homeSkills(home: string): Promise<SkillTree> {
  try {
    return await readSkillTree(join(home, 'skills'));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return { bundles: [], skipped: [] };
    if (error instanceof UnsafeFileError) return { bundles: [], skipped: [{ what: error.path, why: error.message }] };
    throw error;
  }
}

async function readHome(given: string, target: ImportTarget): Promise<ReadHome> {
  // The path the operator names may be a link (~/.hermes on another disk); links inside it are not followed.
  const home = await realpath(given).catch(() => undefined);
  if (home === undefined) throw new HomeError(`${given}: no such directory`);
  if (!(await lstat(home)).isDirectory()) throw new HomeError(`${given}: not a directory (a Hermes home is one)`);
  const timezone = await homeTimezone(home, target);
  const jobs = (await readJobs(home)) ?? [];
  const memory = await readMemoryFiles(home);
  const skills = await homeSkills(home);
  const statePath = join(home, 'state.db');
  const state = (await lstat(statePath).catch(() => undefined)) === undefined ? null : await openHermesState(statePath);
  return { state, memory, skills, jobs, timezone };
}

/** Imports one Hermes home, all or nothing: every part is written in one transaction. */
export async function importHermesHome(config: Config, home: string, target: ImportTarget): Promise<ImportReport> {
  const read = await readHome(home, target);
  const pool = createPool({ url: config.database.url, maxConnections: 1 });
  try {
    if (read.state !== null) process.stderr.write(`reading ${join(home, 'state.db')}\n`);
    const owner = { profileId: target.profileId, userId: target.userId };
    const { history, knowledge, cron } = await withSingleClient(pool, async (client, trx) => {
      const history = read.state === null ? null : await importHistory(client, read.state, { ...owner, onProgress: (message) => process.stderr.write(`  ${message}\n`) });
      const knowledge: KnowledgeReport = { memory: { imported: 0, alreadyThere: 0, skipped: [] }, skills: { imported: [], alreadyThere: [], skipped: [] } };
      await importMemory(trx, read.memory, owner, knowledge);
      await importHermesSkills(trx, read.skills, target.profileId, knowledge);
      const cron = await importCron(trx, read.jobs, { ...owner, timezone: read.timezone.zone });
      return { history, knowledge, cron };
    });
    if (history !== null) {
      const client = await pool.connect();
      await settleIndexes(client, history).finally(() => client.release());
    }
    const unplaced = { ...(read.state?.unplaced() ?? {}), ...Object.fromEntries(Object.entries(cron.unplaced).map(([field, n]) => [`cron/jobs.json ${field}`, n])) };
    return { history, knowledge, cron, timezone: read.timezone, unplaced, summary: summarise(history, knowledge, cron) };
  } finally {
    read.state?.close();
    await pool.end();
  }
}

function describe(report: ImportReport): string {
  const lines = Object.entries(report.summary).map(([kind, counts]) => {
    const reasons = Object.entries(counts.skippedWhy)
      .map(([why, n]) => `\n    skipped ${n}: ${why}`)
      .join('');
    return `${kind}: ${counts.imported} imported, ${counts.unchanged} unchanged, ${counts.skipped} skipped${reasons}`;
  });
  const named = [...report.knowledge.memory.skipped, ...report.knowledge.skills.skipped, ...report.cron.skipped].map((s) => `  skipped ${s.what}: ${s.why}`);
  const unplaced = Object.entries(report.unplaced).map(([field, n]) => `  ${field}: ${n}`);
  return (
    [
      ...lines,
      ...named,
      `cron times read in ${report.timezone.zone} (${report.timezone.from})`,
      ...(unplaced.length > 0 ? ['not carried (Herald has no place for these fields):', ...unplaced] : []),
      ...(report.history?.searchIndexes === 'rebuilt' ? ['search indexes built once after the rows'] : []),
    ].join('\n') + '\n'
  );
}
