import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBindings } from '@herald/profiles';
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

// `herald bindings` edits the list on Postgres through @herald/profiles, as PUT /v1/bindings does.
describe('herald bindings', { timeout: 4 * PROCESS_START_MS }, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: database.url };
    await database.db
      .insertInto('profiles')
      .values([
        { id: 'ops', display_name: 'ops' },
        { id: 'research', display_name: 'research' },
      ])
      .execute();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('adds, lists and removes bindings, refusing a missing profile or an empty rule; a bound profile is not deleted', async () => {
    const added = await herald(['bindings', 'add', 'ops', '--platform', 'telegram', '--account', 'ops'], env);
    expect(added.output).toMatch(/added binding 0: platform=telegram account=ops +-> ops/);
    expect(added.code).toBe(0);
    expect((await herald(['bindings', 'add', 'research', '--platform', 'discord', '--channel-id', '333'], env)).code).toBe(0);
    expect((await herald(['bindings', 'add', '--profile', 'research', '--chat_id', '42', '--at', '0'], env)).code).toBe(0);
    expect(await readBindings(database.db)).toEqual([
      { chat_id: '42', profile: 'research' },
      { platform: 'telegram', account: 'ops', profile: 'ops' },
      { platform: 'discord', channel_id: '333', profile: 'research' },
    ]);
    const list = await herald(['bindings', 'list'], env);
    expect(list.output).toMatch(/^ +1 +platform=telegram account=ops +-> ops$/m);

    const missing = await herald(['bindings', 'add', 'ghost', '--platform', 'telegram'], env);
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/no profile ghost/);
    const empty = await herald(['bindings', 'add', 'ops'], env);
    expect(empty.code).toBe(1);
    expect(empty.output).toMatch(/matches at least one of/);
    expect((await herald(['bindings', 'add', 'ops', '--room', 'x'], env)).code).toBe(2);

    const bound = await herald(['profiles', 'delete', 'ops'], env);
    expect(bound.code).toBe(1);
    expect(bound.output).toMatch(/still has 1 binding/);
    expect((await herald(['profiles', 'show', 'ops'], env)).output).toContain('bindings: {"platform":"telegram","account":"ops"}');

    const removed = await herald(['bindings', 'remove', '1'], env);
    expect(removed.output).toMatch(/removed binding 1: platform=telegram account=ops/);
    expect((await herald(['bindings', 'remove', '9'], env)).code).toBe(1);
    expect((await readBindings(database.db)).map((rule) => rule.profile)).toEqual(['research', 'research']);
    expect((await herald(['profiles', 'delete', 'ops'], env)).code).toBe(0);
  });

  it('refuses to start with a bad HERALD_PLATFORMS_FILE, naming the field and not the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-platforms-'));
    chmodSync(dir, 0o755);
    const path = join(dir, 'platforms.yaml');
    writeFileSync(path, 'telegram:\n  - {account: ops, token_env: OPS_TOKEN}\n  - {account: ops, token_env: OTHER_TOKEN}\n');
    const duplicate = await herald(['migrate'], { ...env, HERALD_PLATFORMS_FILE: path, OPS_TOKEN: '111:secret-ops', OTHER_TOKEN: '222:secret-other' });
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.output).toMatch(/telegram\[1\]\.account: duplicate account 'ops'/);
    expect(duplicate.output).not.toContain('secret-ops');
    const unset = await herald(['migrate'], { ...env, HERALD_PLATFORMS_FILE: path });
    expect(unset.code).not.toBe(0);
    expect(unset.output).toMatch(/telegram\[0\]\.token_env: the variable OPS_TOKEN is not set/);
  });
});
