import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HERALD_BIN, PROCESS_START_MS } from './support/stack.ts';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';

function herald(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HERALD_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

// `herald profiles` works on Postgres through @herald/profiles, the module the API uses.
describe('herald profiles', { timeout: 3 * PROCESS_START_MS }, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: database.url };
  });
  afterAll(async () => {
    await database.drop();
  });

  it('creates, copies, lists, shows and deletes profiles, refusing what the API refuses', async () => {
    const db = database.db;
    await db
      .updateTable('profiles')
      .set({ identity: 'I am Opsy.', model: JSON.stringify({ primary: 'openai/gpt-ops' }) })
      .where('id', '=', 'main')
      .execute();
    await db.insertInto('memory_entries').values({ profile_id: 'main', store: 'memory', user_id: '', content: 'a note' }).execute();
    await db
      .insertInto('profile_hooks')
      .values({ profile_id: 'main', hooks: JSON.stringify([{ name: 'audit', event: 'post_tool_call', url: 'https://hooks.example/x' }]) })
      .execute();

    const created = await herald(['profiles', 'create', 'ops', '--from', 'main'], env);
    expect(created.output).toMatch(/created profile ops from main/);
    expect(created.code).toBe(0);
    const copy = await db.selectFrom('profiles').select(['identity', 'model']).where('id', '=', 'ops').executeTakeFirstOrThrow();
    expect(copy).toEqual({ identity: 'I am Opsy.', model: { primary: 'openai/gpt-ops' } });
    expect(await db.selectFrom('memory_entries').select('id').where('profile_id', '=', 'ops').execute()).toEqual([]);
    // The hooks come along through libs/hooks' copyProfileHooks, as the API's copy does.
    expect((await db.selectFrom('profile_hooks').select('hooks').where('profile_id', '=', 'ops').executeTakeFirstOrThrow()).hooks).toEqual([
      { name: 'audit', event: 'post_tool_call', url: 'https://hooks.example/x' },
    ]);

    const bad = await herald(['profiles', 'create', 'Bad_Name'], env);
    expect(bad.code).toBe(1);
    expect(bad.output).toMatch(/name: lowercase letters, digits and dashes/);
    expect((await herald(['profiles', 'create', 'ops'], env)).code).toBe(1);

    const list = await herald(['profiles', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.output).toMatch(/^main +openai\/gpt-ops; 0 binding\(s\)$/m);
    expect(list.output).toMatch(/^ops +openai\/gpt-ops; 0 binding\(s\)$/m);

    const show = await herald(['profiles', 'show', 'ops'], env);
    expect(show.output).toContain('model: openai/gpt-ops');
    expect(show.output).toContain('identity: I am Opsy.');
    expect(show.output).toContain('bindings: (none)');

    const main = await herald(['profiles', 'delete', 'main'], env);
    expect(main.code).toBe(1);
    expect(main.output).toMatch(/main cannot be deleted/);
    const deleted = await herald(['profiles', 'delete', 'ops'], env);
    expect(deleted.code).toBe(0);
    expect((await herald(['profiles', 'list'], env)).output).not.toMatch(/^ops /m);
    expect((await herald(['profiles', 'show', 'ops'], env)).output).toMatch(/deleted .*read-only/);
    expect((await herald(['profiles', 'delete', 'ghost'], env)).output).toMatch(/no profile ghost/);
  });

  it("gives a created profile Herald's built-in skills at once, and a copy lists them as built-ins", async () => {
    expect((await herald(['profiles', 'create', 'fresh'], env)).code).toBe(0);
    expect((await herald(['profiles', 'create', 'fresh-copy', '--from', 'fresh'], env)).code).toBe(0);
    for (const profile of ['fresh', 'fresh-copy']) {
      const listed = (await herald(['skills', 'list', '--profile', profile], env)).output;
      expect(listed, profile).toContain('herald:\n  cron-jobs v1 (builtin v1): ');
      for (const name of ['delegating-tasks', 'finding-past-work', 'handing-over-a-chat', 'incident-triage', 'writing-skills'])
        expect(listed, profile).toMatch(new RegExp(`^  ${name} v1 \\(builtin v1\\): `, 'm'));
    }
  });
});
