import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { importHermesHome } from '../cli/src/import-command.ts';
import { addMessages, addSessions, newHermesDb, writeHermesHome } from './support/hermes-home.ts';
import { currentHermesHome } from './support/hermes-fixture.ts';
import { HERALD_BIN } from './support/stack.ts';
import { useTestDatabase } from './support/use-test-database.ts';

// Malformed homes are refused before anything is written, naming the file, table or field; a
// failure midway leaves nothing; an older layout still imports.

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

const homes: string[] = [];
async function home(...args: Parameters<typeof writeHermesHome>): Promise<string> {
  const path = await writeHermesHome(...args);
  homes.push(path);
  return path;
}

const MEMORY = { 'memories/MEMORY.md': 'A note that must not land when the home is refused.' };

describe('herald import hermes: refusals and older layouts', () => {
  const database = useTestDatabase();
  const config = () => loadConfig({ DATABASE_URL: database.url });
  const target = { profileId: 'main', userId: 'api:u1' };
  afterAll(async () => {
    for (const path of homes) await rm(path, { recursive: true, force: true });
  });

  async function written(): Promise<Record<string, string>> {
    const row = await sql<Record<string, string>>`SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM messages) AS messages,
      (SELECT count(*) FROM memory_entries) AS memory, (SELECT count(*) FROM skills) AS skills, (SELECT count(*) FROM cron_jobs) AS cron`.execute(database.db);
    return row.rows[0]!;
  }
  const nothing = { sessions: '0', messages: '0', memory: '0', skills: '0', cron: '0' };

  it('refuses messages without a role, naming the table and field, and writes nothing', async () => {
    const db = await newHermesDb(
      `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL);
       CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL);`,
    );
    db.run(`INSERT INTO sessions VALUES ('s1', 'cli', 1700000000)`);
    db.run(`INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', NULL, 'hi', 1700000001), ('s1', NULL, 'there', 1700000002)`);
    await expect(importHermesHome(config(), await home(db, MEMORY), target)).rejects.toThrow(/state\.db: table messages, field role: 2 row\(s\)/);
    expect(await written()).toEqual(nothing);
  });

  it('refuses sessions without started_at instead of dating them 1970', async () => {
    const db = await newHermesDb(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL);
      CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL);`);
    db.run(`INSERT INTO sessions VALUES ('s1', 'cli', NULL)`);
    await expect(importHermesHome(config(), await home(db, MEMORY), target)).rejects.toThrow(/table sessions, field started_at/);
    expect(await written()).toEqual(nothing);
  });

  it('refuses a state.db without a column every row needs, a corrupt one, broken YAML and broken JSON', async () => {
    const noRole = await newHermesDb(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL);
      CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT, timestamp REAL);`);
    await expect(importHermesHome(config(), await home(noRole, MEMORY), target)).rejects.toThrow(/state\.db: table messages has no column role/);
    const corrupt = await home(null, MEMORY);
    await writeFile(join(corrupt, 'state.db'), Buffer.alloc(8192, 7));
    await expect(importHermesHome(config(), corrupt, target)).rejects.toThrow(/state\.db: not a readable SQLite database/);
    const yaml = await home(await newHermesDb(30), { ...MEMORY, 'config.yaml': 'timezone: "Asia/Tokyo\nmodel: [x\n' });
    await expect(importHermesHome(config(), yaml, target)).rejects.toThrow(/config\.yaml: line \d+/);
    const zone = await home(await newHermesDb(30), { ...MEMORY, 'config.yaml': 'timezone: Mars/Olympus\n' });
    await expect(importHermesHome(config(), zone, target)).rejects.toThrow(/config\.yaml: field timezone: 'Mars\/Olympus'/);
    const json = await home(await newHermesDb(30), { ...MEMORY, 'cron/jobs.json': '{"jobs": [' });
    await expect(importHermesHome(config(), json, target)).rejects.toThrow(/cron\/jobs\.json: not valid JSON/);
    expect(await written()).toEqual(nothing);
  });

  it('exits non-zero for a home that does not exist, saying so', async () => {
    const run = await herald(['import', 'hermes', '/nonexistent', '--user', 'u1'], { DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/\/nonexistent: no such directory/);
  });

  it('leaves nothing half-written when a later part fails: the home is one transaction', async () => {
    const fixture = await currentHermesHome();
    homes.push(fixture.home, fixture.outside);
    // Sabotage the last part (cron jobs) with a real database error after history, memory and skills went in.
    await sql`CREATE FUNCTION refuse_cron() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`.execute(database.db);
    await sql`CREATE TRIGGER refuse_cron BEFORE INSERT ON cron_jobs FOR EACH ROW EXECUTE FUNCTION refuse_cron()`.execute(database.db);
    try {
      await expect(importHermesHome(config(), fixture.home, target)).rejects.toThrow(/disk full/);
      expect(await written()).toEqual(nothing);
    } finally {
      await sql`DROP TRIGGER refuse_cron ON cron_jobs`.execute(database.db);
    }
  });

  it('skips a 30 MB memory file by its size before reading it, and imports the rest', async () => {
    const path = await home(null, { 'memories/USER.md': 'Name: Dana.', 'memories/MEMORY.md': Buffer.alloc(30 * 1024 * 1024, 'a') });
    const report = await importHermesHome(config(), path, target);
    expect(report.knowledge.memory.skipped).toEqual([{ what: join(path, 'memories/MEMORY.md'), why: expect.stringMatching(/MEMORY\.md: is 31457280 bytes; the limit is 1048576/) }]);
    expect(report.knowledge.memory.imported).toBe(1);
    expect(report.history).toBeNull();
  });

  it('imports an older layout (schema 21, the prompt inline)', async () => {
    const db = await newHermesDb(21);
    addSessions(db, [{ id: 'old1', source: 'discord', userId: '7', chatId: '555', startedAt: 1_700_000_000, title: 'Old times', systemPrompt: 'Inline prompt.' }]);
    addMessages(db, [{ sessionId: 'old1', role: 'user', content: 'hello from 21', timestamp: 1_700_000_001 }]);
    const report = await importHermesHome(config(), await home(db), { profileId: 'main', userId: 'api:u9' });
    expect(report.summary.sessions.imported).toBe(1);
    const session = await database.db.selectFrom('sessions').select(['title', 'system_prompt', 'platform']).where('session_key', '=', 'hermes:old1').executeTakeFirstOrThrow();
    expect(session).toEqual({ title: 'Old times', system_prompt: 'Inline prompt.', platform: 'discord' });
  });

  it('reads cron times in --timezone, else HERMES_TIMEZONE, else config.yaml; "all" means the home chats', async () => {
    await database.db.insertInto('home_chats').values({ profile_id: 'main', platform: 'telegram', chat_id: '777', chat_type: 'dm', set_by: 'telegram:1' }).execute();
    const jobs = { jobs: [{ id: 'd4e5f6a1b2c3', name: 'tz job', prompt: 'p', skill: null, schedule: { kind: 'cron', expr: '0 8 * * *' }, deliver: 'all', origin: null }] };
    const path = await home(null, { 'config.yaml': 'timezone: Asia/Tokyo\n', 'cron/jobs.json': JSON.stringify(jobs) });
    const fromEnv = await importHermesHome(config(), path, { profileId: 'main', userId: 'api:tz1', envTimezone: 'Europe/Berlin' });
    expect(fromEnv.timezone).toEqual({ zone: 'Europe/Berlin', from: 'HERMES_TIMEZONE' });
    const given = await importHermesHome(config(), path, { profileId: 'main', userId: 'api:tz2', timezone: 'America/New_York', envTimezone: 'Europe/Berlin' });
    expect(given.timezone).toEqual({ zone: 'America/New_York', from: '--timezone' });
    const fromFile = await importHermesHome(config(), path, { profileId: 'main', userId: 'api:tz3' });
    expect(fromFile.timezone).toEqual({ zone: 'Asia/Tokyo', from: 'config.yaml' });
    const rows = await database.db.selectFrom('cron_jobs').select(['creator_user_id', 'timezone', 'targets']).where('name', '=', 'tz job').orderBy('creator_user_id').execute();
    expect(rows.map((row) => [row.creator_user_id, row.timezone])).toEqual([
      ['api:tz1', 'Europe/Berlin'],
      ['api:tz2', 'America/New_York'],
      ['api:tz3', 'Asia/Tokyo'],
    ]);
    expect(rows[0]!.targets).toEqual([{ platform: 'telegram', chatId: '777' }]);
  });
});
