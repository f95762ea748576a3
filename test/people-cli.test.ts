import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { HERALD_BIN, PROCESS_START_MS } from './support/stack.ts';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';

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

/** Issue 32, points 1, 2 and 7 from the command line: herald people ... and herald tokens create. */
describe('herald people and herald tokens', { timeout: 4 * PROCESS_START_MS }, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: database.url };
  });
  afterAll(async () => {
    await database.drop();
  });

  it('adds, grants, revokes, shows, lists and removes people; creates a token printed once', async () => {
    const added = await herald(['people', 'add', 'Ana', 'Lima', '--identity', 'api:ana', '--identity', 'telegram:42', '--role', 'operator:main'], env);
    expect(added.code, added.stderr).toBe(0);
    const id = /added ([0-9a-f-]{36})/.exec(added.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    expect((await herald(['people', 'grant', id, 'viewer', '--profiles', 'ops'], env)).code).toBe(0);
    expect((await herald(['people', 'revoke', 'telegram:42', 'operator'], env)).code).toBe(0);
    const token = await herald(['tokens', 'create', '--person', id, '--expires', '30d', '--name', 'laptop'], env);
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toMatch(/^hrd_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    expect(token.stderr).toContain('shown once');
    const shown = await herald(['people', 'show', id], env);
    expect(shown.stdout).toContain('person ' + id + ': Ana Lima');
    expect(shown.stdout).toContain('identities: api:ana, telegram:42');
    expect(shown.stdout).toContain('roles: viewer:ops');
    expect(shown.stdout).toMatch(/laptop {2}live {2}expires 20/);
    expect(shown.stdout).not.toContain(token.stdout.trim());
    expect((await herald(['people', 'list'], env)).stdout).toContain('Ana Lima');
    const code = await herald(['people', 'link-code', id], env);
    expect(code.stdout.trim()).toMatch(/^[A-Z2-9]{8}$/);
    const bad = await herald(['people', 'grant', id, 'owner'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a role');
    expect((await herald(['tokens', 'create', '--person', id, '--expires', 'soon'], env)).code).toBe(2);
    expect((await herald(['people', 'remove', id], env)).code).toBe(0);
    expect((await herald(['people', 'show', id], env)).code).toBe(1);
  });

  it('exports everything of a person as one JSON file, then erases it in one transaction, audited without content', async () => {
    const db = database.db;
    const added = await herald(['people', 'add', 'Eve', '--identity', 'telegram:77', '--role', 'member'], env);
    const id = /added ([0-9a-f-]{36})/.exec(added.stdout)?.[1] ?? '';
    await herald(['tokens', 'create', '--person', id], env);
    const session = await db
      .insertInto('sessions')
      .values({
        id: randomUUID(),
        profile_id: 'main',
        platform: 'telegram',
        chat_type: 'dm',
        chat_id: '77',
        session_key: 'agent:main:telegram:dm:77',
        origin_user_id: 'telegram:77',
        system_prompt: 'You know: Eve likes plums',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('messages')
      .values([
        { session_id: session.id, seq: 1, role: 'user', content: 'my plum secret' },
        { session_id: session.id, seq: 2, role: 'assistant', content: 'noted the plum' },
      ])
      .execute();
    await db.insertInto('memory_entries').values({ profile_id: 'main', store: 'user', user_id: 'telegram:77', content: 'Eve likes plums' }).execute();
    await db.insertInto('memory_entries').values({ profile_id: 'main', store: 'user', user_id: 'telegram:88', content: 'someone else' }).execute();

    const dir = mkdtempSync(join(tmpdir(), 'herald-export-'));
    chmodSync(dir, 0o755);
    const file = join(dir, 'eve.json');
    const exported = await herald(['people', 'export', id, '--output', file], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(statSync(file).mode & 0o077).toBe(0);
    const data = JSON.parse(readFileSync(file, 'utf8'));
    expect(data.format).toBe('herald-person-export/1');
    expect(data.person).toMatchObject({ id, display_name: 'Eve', identities: ['telegram:77'] });
    expect(data.sessions).toHaveLength(1);
    expect(data.sessions[0].messages.map((m: { content: string }) => m.content)).toEqual(['my plum secret', 'noted the plum']);
    expect(data.memory.map((m: { content: string }) => m.content)).toEqual(['Eve likes plums']);
    expect(Object.keys(data).sort()).toEqual(['cron_jobs', 'exported_at', 'format', 'memory', 'person', 'sessions', 'skills', 'usage']);

    const erased = await herald(['people', 'erase', id], env);
    expect(erased.code, erased.stderr).toBe(0);
    expect(erased.stdout).toContain('2 message(s), 1 memory entry');
    expect(await db.selectFrom('messages').select('id').where('session_id', '=', session.id).execute()).toEqual([]);
    expect(await db.selectFrom('memory_entries').select('content').execute()).toEqual([{ content: 'someone else' }]);
    expect((await db.selectFrom('sessions').select('system_prompt').where('id', '=', session.id).executeTakeFirstOrThrow()).system_prompt).toBeNull();
    for (const table of ['people', 'person_identities', 'api_tokens', 'role_grants'] as const) {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(table === 'people' ? 'id' : 'person_id')} = ${id}::uuid`.execute(db);
      expect(Number(rows[0]?.n), table).toBe(0);
    }
    const audit = await db.selectFrom('audit_log').select(['actor', 'subject', 'detail']).where('subject', '=', `person:${id}`).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(audit).toEqual({ actor: 'cli', subject: `person:${id}`, detail: { action: 'erase' } });
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM audit_log WHERE detail::text LIKE '%plum%'`.execute(db);
    expect(Number(rows[0]?.n)).toBe(0);
  });
});
