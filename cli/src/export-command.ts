import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { apiUserId } from '@herald/core';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import type { Db } from '@herald/db';
import { readMemory } from '@herald/knowledge';
import { exportCron } from './hermes-export/export-cron.ts';
import { exportState } from './hermes-export/export-state.ts';
import { writeSkillTree } from './skill-tree.ts';

export const EXPORT_USAGE = `usage: herald export hermes DIR --user ID [--profile P] [--json]

Writes a Hermes home that upstream Hermes opens: state.db (its current schema) with the person's
sessions and messages, memories/MEMORY.md and USER.md, the profile's skills under skills/<category>/,
cron/jobs.json with the person's jobs and config.yaml with their time zone. DIR must be empty or
not exist yet. herald import hermes DIR brings it back.
`;

/** Hermes' entry delimiter in MEMORY.md and USER.md. */
const ENTRY_DELIMITER = '\n§\n';

export interface ExportReport {
  home: string;
  sessions: number;
  messages: number;
  memory: number;
  user: number;
  skills: number;
  cron: number;
}

function fail(message: string, code = 2): never {
  process.stderr.write(`herald: ${message}\n${code === 2 ? EXPORT_USAGE : ''}`);
  process.exit(code);
}

export async function runExport(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { user: { type: 'string' }, profile: { type: 'string', default: 'main' }, json: { type: 'boolean', default: false } },
  });
  if (positionals[0] !== 'hermes') fail('export knows one target: hermes');
  const dir = positionals[1] ?? fail('export hermes needs the directory to write the Hermes home to');
  const user = values.user ?? fail('export hermes needs --user: the Herald person whose history is exported');
  const home = resolve(dir);
  const problem = await notEmpty(home);
  if (problem !== undefined) fail(problem, 1);
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    const report = await exportHermesHome(db, home, { profileId: values.profile, userId: apiUserId(user) });
    process.stdout.write(
      values.json
        ? `${JSON.stringify(report, null, 2)}\n`
        : `wrote ${home}: ${report.sessions} sessions, ${report.messages} messages, ${report.memory + report.user} memory entries, ${report.skills} skills, ${report.cron} cron jobs\n`,
    );
  } finally {
    await db.destroy();
  }
}

/** Why DIR cannot take a new home: it is a file or link, or holds something already. */
async function notEmpty(dir: string): Promise<string | undefined> {
  const info = await lstat(dir).catch(() => undefined);
  if (info === undefined) return undefined;
  if (!info.isDirectory()) return `${dir} exists and is not a directory`;
  if ((await readdir(dir)).length > 0) return `${dir} is not empty; export writes a new Hermes home into an empty directory`;
  return undefined;
}

async function writeMemoryFile(path: string, entries: { content: string }[]): Promise<number> {
  if (entries.length === 0) return 0;
  await writeFile(path, entries.map((entry) => entry.content).join(ENTRY_DELIMITER));
  return entries.length;
}

/** Writes the person's Hermes home into `home` (empty or new). */
export async function exportHermesHome(db: Db, home: string, owner: { profileId: string; userId: string }): Promise<ExportReport> {
  await mkdir(join(home, 'memories'), { recursive: true, mode: 0o700 });
  await mkdir(join(home, 'cron'), { recursive: true });
  const state = await exportState(db, owner.profileId, owner.userId);
  await writeFile(join(home, 'state.db'), state.bytes, { mode: 0o600 });
  const memory = await writeMemoryFile(join(home, 'memories', 'MEMORY.md'), (await readMemory(db, { ...owner, store: 'memory' })).entries);
  const user = await writeMemoryFile(join(home, 'memories', 'USER.md'), (await readMemory(db, { ...owner, store: 'user' })).entries);
  const skills = await writeSkillTree(db, owner.profileId, join(home, 'skills'), { byCategory: true });
  const cron = await exportCron(db, owner.profileId, owner.userId);
  await writeFile(join(home, 'cron', 'jobs.json'), `${JSON.stringify({ jobs: cron.jobs }, null, 2)}\n`);
  if (cron.timezone !== null) await writeFile(join(home, 'config.yaml'), stringify({ timezone: cron.timezone }));
  return { home, sessions: state.sessions, messages: state.messages, memory, user, skills, cron: cron.jobs.length };
}
