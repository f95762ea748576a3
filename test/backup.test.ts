import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDatabase, readBackupManifest, withDefaultUser } from '@herald/db';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { ADMIN_URL, uniquePrefix } from './support/test-database.ts';

const exec = promisify(execFile);

/** What a round trip must bring back whole, with the key each table's rows are compared in. */
const KEPT = {
  sessions: 'id',
  messages: 'id',
  memory_entries: 'id',
  skills: 'profile_id, name',
  skill_versions: 'profile_id, name, version',
  cron_jobs: 'id',
  audit_log: 'id',
  turns: 'id',
  inbound_events: 'id',
  profiles: 'id',
} as const;

type Snapshot = Record<string, unknown[]>;

async function snapshot(url: string): Promise<Snapshot> {
  const client = new pg.Client({ connectionString: withDefaultUser(url) });
  await client.connect();
  try {
    const result: Snapshot = {};
    for (const [table, key] of Object.entries(KEPT)) result[table] = (await client.query(`SELECT * FROM ${table} ORDER BY ${key}`)).rows;
    return result;
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  return Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
}

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDefaultUser(ADMIN_URL) });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
}

/** `herald <args>` with the given environment; resolves with its exit code and output, never throws. */
async function herald(args: string[], env: Record<string, string>, cwd = tmpdir()): Promise<{ code: number; stdout: string; stderr: string }> {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'HERALD_DATA_DIR', 'HERALD_DATABASE']) delete base[name];
  try {
    const { stdout, stderr } = await exec(process.execPath, [HERALD_BIN, ...args], { cwd, env: { ...base, LOG_LEVEL: 'warn', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('herald backup and herald restore', { timeout: 4 * PROCESS_START_MS }, () => {
  let model: FakeLLM;
  let stack: Stack;
  let dir: string;
  let original: Snapshot;
  const restoredName = uniquePrefix();
  const againName = uniquePrefix();

  beforeAll(async () => {
    // A model that calls the tool named in the message ("tool NAME {json}"), then says it did.
    model = await startFakeOpenAI({
      handler: (request) => {
        const last = request.messages.at(-1);
        const match = /^tool (\S+) (\{.*\})$/s.exec(request.lastUserText);
        if (last?.role === 'user' && match) return { toolCalls: [{ name: match[1]!, arguments: JSON.parse(match[2]!) as Record<string, unknown> }] };
        return { text: `done: ${String(last?.content ?? '').slice(0, 40)}` };
      },
    });
    stack = await startStack({ model });
    dir = await mkdtemp(join(tmpdir(), 'herald-backup-'));
    // The embedded Postgres runs as the unprivileged user postgres when we are root.
    await chmod(dir, 0o755);
    const say = async (chat: string, text: string) => {
      const response = await stack.post('/v1/messages?wait=30', { chat_id: chat, user_id: 'ada', text });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    };
    await say('b1', 'hello, remember me');
    await say('b2', `tool memory ${JSON.stringify({ action: 'add', target: 'memory', content: 'Ada keeps backups on Fridays' })}`);
    await say('b3', `tool skill_manage ${JSON.stringify({ action: 'create', name: 'restore-drill', content: '---\nname: restore-drill\ndescription: Practise a restore.\n---\n1. Restore.\n' })}`);
    await say('b4', `tool cronjob ${JSON.stringify({ action: 'create', prompt: 'check the backups', schedule: 'every 1d', name: 'backups' })}`);
    original = await snapshot(stack.env.DATABASE_URL!);
  }, 2 * PROCESS_START_MS);

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
    await dropDatabase(restoredName);
    await dropDatabase(againName);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes a manifest (version, migrations, counts) and restores every row into an empty database (external Postgres)', async () => {
    for (const table of ['sessions', 'messages', 'memory_entries', 'skills', 'cron_jobs', 'audit_log'] as const) {
      expect(original[table]!.length, table).toBeGreaterThan(0);
    }
    const file = join(dir, 'external.herald-backup');
    const backup = await herald(['backup', file], { DATABASE_URL: stack.env.DATABASE_URL!, HERALD_QUEUE: 'postgres' });
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`backup written to ${file}: 4 sessions, ${original.messages!.length} messages, 1 memory entries`);
    const manifest = await readBackupManifest(file);
    expect(manifest.heraldVersion).toBe('0.1.0');
    expect(manifest.migrations).toContain('0001_baseline.sql');
    expect(manifest.tables.find((table) => table.name === 'public.messages')?.rows).toBe(original.messages!.length);
    expect(manifest.tables.find((table) => table.name === 'public.audit_log')?.rows).toBe(original.audit_log!.length);
    // Generated columns are not in the file: Postgres computes them again on the way in.
    expect(manifest.tables.find((table) => table.name === 'public.messages')?.columns).not.toContain('search_vector');

    const target = databaseUrl(restoredName);
    const restore = await herald(['restore', file], { DATABASE_URL: target, HERALD_QUEUE: 'postgres' });
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`restored ${file}: 4 sessions`);
    // Rows compare whole, generated columns (messages' search columns, computed again) included.
    expect(await snapshot(target)).toEqual(original);
    // Sequences came along: the next audit row does not collide with a restored one.
    const client = new pg.Client({ connectionString: withDefaultUser(target) });
    await client.connect();
    try {
      const next = await client.query<{ n: string }>(`SELECT nextval('audit_log_id_seq')::text AS n`);
      expect(Number(next.rows[0]!.n)).toBeGreaterThan(Math.max(...original.audit_log!.map((row: any) => Number(row.id))));
    } finally {
      await client.end();
    }
  });

  it('refuses to restore into a database that holds Herald data, and changes nothing there', async () => {
    const file = join(dir, 'external.herald-backup');
    const target = databaseUrl(restoredName);
    const before = await snapshot(target);
    const again = await herald(['restore', file], { DATABASE_URL: target, HERALD_QUEUE: 'postgres' });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/herald restore: the database already holds Herald data \(.*\b4 sessions\b.*\): restore only into an empty database/);
    expect(await snapshot(target)).toEqual(before);
    const notABackup = await herald(['restore', join(dir, '..', 'nothing-here')], { DATABASE_URL: databaseUrl(againName), HERALD_QUEUE: 'postgres' });
    expect(notABackup.code).not.toBe(0);
  });

  it('round-trips through the embedded Postgres: restore into a fresh data directory, back up from it, restore that elsewhere', async () => {
    const embedded = { HERALD_DATABASE: 'embedded', HERALD_QUEUE: 'postgres', HERALD_DATA_DIR: join(dir, 'embedded') };
    const restore = await herald(['restore', join(dir, 'external.herald-backup')], embedded, dir);
    expect(restore.code, restore.stderr).toBe(0);
    const file = join(dir, 'embedded.herald-backup');
    const backup = await herald(['backup', file], embedded, dir);
    expect(backup.code, backup.stderr).toBe(0);
    const manifest = await readBackupManifest(file);
    expect(manifest.tables.find((table) => table.name === 'public.sessions')?.rows).toBe(4);
    const target = databaseUrl(againName);
    await ensureDatabase(target);
    const back = await herald(['restore', file], { DATABASE_URL: target, HERALD_QUEUE: 'postgres' });
    expect(back.code, back.stderr).toBe(0);
    expect(await snapshot(target)).toEqual(original);
  });
});
