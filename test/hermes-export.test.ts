import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import type { Db } from '@herald/db';
import { readSkillFiles } from '@herald/knowledge';
import { importHermesHome } from '../cli/src/import-command.ts';
import { HERMES_SCHEMA_VERSION } from '../cli/src/hermes-import/hermes-layout.ts';
import { currentHermesHome, PROMPT } from './support/hermes-fixture.ts';
import type { FixtureHome } from './support/hermes-fixture.ts';
import { HERALD_BIN } from './support/stack.ts';
import { useTestDatabase } from './support/use-test-database.ts';

// The way back: herald export hermes writes a Hermes home, and importing it into an empty Herald
// gives the same data.

const require = createRequire(import.meta.url);

function herald(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HERALD_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A session's name that survives the trip: its Hermes id (a Herald-born session goes out under its own id). */
function stableKeys(rows: { id: string; session_key: string }[]): Map<string, string> {
  return new Map(rows.map((row) => [row.id, row.session_key.startsWith('hermes:') ? row.session_key : `hermes:${row.id}`]));
}

/** Everything an import writes, with sessions named by their stable key instead of the writing's ids. */
async function contents(db: Db) {
  const rows = await db
    .selectFrom('sessions')
    .select([
      'id',
      'session_key',
      'platform',
      'chat_type',
      'chat_id',
      'thread_id',
      'origin_user_id',
      'system_prompt',
      'parent_session_id',
      'created_at',
      'ended_at',
      'end_reason',
      'imported_end_reason',
      'title',
      'model',
      'imported_usage',
    ])
    .execute();
  const keys = stableKeys(rows);
  const sessions = rows
    .map(({ id, session_key: _key, parent_session_id: parent, ...rest }) => ({ key: keys.get(id)!, parent: parent === null ? null : keys.get(parent)!, ...rest }))
    .sort((a, b) => a.key.localeCompare(b.key));
  const messages = (
    await db.selectFrom('messages').select(['session_id', 'seq', 'role', 'content', 'tool_calls', 'tool_call_id', 'tool_name', 'created_at', 'reasoning', 'platform_message_id', 'owner_id']).execute()
  )
    .map(({ session_id: session, ...rest }) => ({ session: keys.get(session)!, ...rest }))
    .sort((a, b) => a.session.localeCompare(b.session) || a.seq - b.seq);
  const memory = await db.selectFrom('memory_entries').select(['store', 'user_id', 'content']).orderBy('store').orderBy('id').execute();
  const skills = await db.selectFrom('skills').select(['name', 'category', 'description', 'tags']).orderBy('name').execute();
  const files: Record<string, Record<string, string>> = {};
  for (const skill of skills) {
    const stored = (await readSkillFiles(db, 'main', skill.name)) ?? new Map<string, Buffer>();
    files[skill.name] = Object.fromEntries([...stored].map(([path, content]) => [path, content.toString('base64')]));
  }
  const cron = await db
    .selectFrom('cron_jobs')
    .select(['name', 'prompt', 'schedule', 'schedule_kind', 'timezone', 'skills', 'toolsets', 'targets', 'origin', 'enabled', 'paused_reason', 'creator_user_id'])
    .orderBy('name')
    .execute();
  return { sessions, messages, memory, skills, files, cron };
}

describe('herald export hermes', () => {
  const source = useTestDatabase();
  const target = useTestDatabase();
  let fixture: FixtureHome;
  let exported: string;
  beforeAll(async () => {
    fixture = await currentHermesHome();
    await importHermesHome(loadConfig({ DATABASE_URL: source.url }), fixture.home, { profileId: 'main', userId: 'api:u1' });
    // A conversation born in Herald (not imported): it must make the trip too.
    await sql`INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, origin_user_id, system_prompt, created_at, title)
              VALUES ('0b6f1c1e-8a51-4a3e-9d2b-3f1a2b3c4d5e', 'main', 'api:u1:chat', 'api', 'dm', 'u1', 'api:u1', 'Herald prompt', '2026-11-01T10:00:00Z', 'Born here')`.execute(source.db);
    await sql`INSERT INTO messages (session_id, seq, role, content, tool_calls, created_at) VALUES
              ('0b6f1c1e-8a51-4a3e-9d2b-3f1a2b3c4d5e', 1, 'user', 'check the disk', NULL, '2026-11-01T10:00:01Z'),
              ('0b6f1c1e-8a51-4a3e-9d2b-3f1a2b3c4d5e', 2, 'assistant', '', ${JSON.stringify([{ id: 'c1', name: 'terminal', arguments: '{"command":"df -h"}' }])}::jsonb, '2026-11-01T10:00:02Z')`.execute(
      source.db,
    );
    exported = join(await mkdtemp(join(tmpdir(), 'hermes-export-')), 'home');
  });
  afterAll(async () => {
    for (const path of [fixture.home, fixture.outside, join(exported, '..')]) await rm(path, { recursive: true, force: true });
  });

  it('writes a Hermes home in the current upstream layout', async () => {
    const run = await herald(['export', 'hermes', exported, '--user', 'u1', '--json'], { DATABASE_URL: source.url, LOG_LEVEL: 'silent' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sessions: 4, messages: 10, memory: 2, user: 1, skills: 3, cron: 2 });
    const SQL = await initSqlJs({ locateFile: (file) => require.resolve(`sql.js/dist/${file}`) });
    const state = new SQL.Database(await readFile(join(exported, 'state.db')));
    expect(state.exec('SELECT version FROM schema_version')[0]!.values).toEqual([[HERMES_SCHEMA_VERSION]]);
    const [session] = state.exec(`SELECT s.title, s.end_reason, p.prompt, s.system_prompt FROM sessions s JOIN system_prompts p ON p.hash = s.system_prompt_hash WHERE s.id = '20261001_090000_a1'`);
    expect(session!.values).toEqual([['Deploy planning', 'compression', PROMPT, null]]);
    const calls = state.exec(`SELECT count(*) FROM messages WHERE active = 1`)[0]!.values;
    expect(calls).toEqual([[10]]);
    state.close();
    expect(await readFile(join(exported, 'memories/MEMORY.md'), 'utf8')).toBe('The team deploys on Tuesdays.\n§\nStaging is marigold.');
    expect((await stat(join(exported, 'skills/mlops/inference/serving-llms-vllm/SKILL.md'))).isFile()).toBe(true);
    const jobs = JSON.parse(await readFile(join(exported, 'cron/jobs.json'), 'utf8')).jobs.sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name));
    expect(jobs.map((job: { name: string; schedule: unknown; paused_reason: unknown; deliver: unknown }) => [job.name, job.schedule, job.paused_reason, job.deliver])).toEqual([
      ['morning briefing', { kind: 'cron', expr: '30 7 * * *', display: '30 7 * * *' }, null, 'telegram:-1001234567:17'],
      ['weekly review', { kind: 'interval', minutes: 10080, display: 'every 10080m' }, 'on holiday until October', 'local'],
    ]);
    expect(await readFile(join(exported, 'config.yaml'), 'utf8')).toBe('timezone: Asia/Tokyo\n');
  });

  it('refuses to write into a directory that holds something', async () => {
    const run = await herald(['export', 'hermes', exported, '--user', 'u1'], { DATABASE_URL: source.url, LOG_LEVEL: 'silent' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/is not empty/);
  });

  it('round-trips: importing the export into an empty Herald gives the same data', async () => {
    const report = await importHermesHome(loadConfig({ DATABASE_URL: target.url }), exported, { profileId: 'main', userId: 'api:u1' });
    expect(report.summary.skills.skipped).toBe(0);
    expect(report.summary.cron.skipped).toBe(0);
    const before = await contents(source.db);
    const after = await contents(target.db);
    expect(after.sessions).toEqual(before.sessions);
    expect(after.messages).toEqual(before.messages);
    expect(after.memory).toEqual(before.memory);
    expect(after.skills).toEqual(before.skills);
    expect(after.files).toEqual(before.files);
    expect(after.cron).toEqual(before.cron);
    expect(before.messages.length).toBe(10);
    expect(after.sessions.find((session) => session.title === 'Born here')).toMatchObject({ platform: 'api', system_prompt: 'Herald prompt' });
    const paused = await sql<{ n: string }>`SELECT count(*) AS n FROM cron_jobs WHERE NOT enabled`.execute(target.db);
    expect(paused.rows[0]!.n).toBe('1');
  });
});
