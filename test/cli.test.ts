import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { withDefaultUser } from '@herald/db';
import { ADMIN_URL, uniquePrefix } from './support/test-database.ts';
import { HERALD_BIN, PROCESS_START_MS, spawnHerald, waitFor } from './support/stack.ts';
import { freePort } from './support/ports.ts';

function run(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HERALD_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
    child.stdin.end(input ?? '');
  });
}

// Every test runs the `herald` command a few times, each a fresh process.
describe('the herald command', { timeout: 3 * PROCESS_START_MS }, () => {
  const database = `herald_t_${randomBytes(5).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).toString();
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: withDefaultUser(ADMIN_URL) });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('refuses bad configuration with one clear line', async () => {
    const result = await run(['migrate'], { PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toBe('herald: invalid configuration: PORT: expected a number');
  });

  it('names a refused DATABASE_URL without printing its password', async () => {
    const result = await run(['migrate'], { DATABASE_URL: 'mysql://herald:hunter2-secret@db:3306/herald' });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/DATABASE_URL: expected a URL like postgres:/);
    expect(result.output).not.toContain('hunter2');
  });

  it('rejects an unknown command with usage', async () => {
    const result = await run(['fly'], {});
    expect(result.code).toBe(2);
    expect(result.output).toMatch(/unknown command 'fly'/);
    expect(result.output).toMatch(/up +every role in one process/);
  });

  it('starts everything with `up` on a missing database, chats, and exits 0 on SIGTERM', async () => {
    const port = String(await freePort());
    const env = { DATABASE_URL: databaseUrl, PORT: port, HERALD_QUEUE_PREFIX: uniquePrefix(), LOG_LEVEL: 'info' };
    const up = spawnHerald('up', env);
    try {
      await waitFor(async () => up.output().includes('Herald is up'), { timeoutMs: PROCESS_START_MS, what: 'herald up' });
      expect(up.output()).toContain(`127.0.0.1:${port}`);
      expect(up.output()).toMatch(/created the database/);

      const chat = await run(['chat'], { PORT: port }, 'hello\n/handoff telegram\n/new\n/quit\n');
      expect(chat.code).toBe(0);
      expect(chat.output).toMatch(/herald> Herald is running, but no model is configured/);
      // A worker takes the handoff and refuses it (no Telegram bot here); the chat follows it to the end.
      expect(chat.output).toMatch(/herald> Handing this conversation off to the telegram home chat/);
      expect(chat.output).toMatch(/herald> The handoff failed: telegram is not configured on this deployment\. This session is unchanged/);
      expect(chat.output).toMatch(/herald> Started a new session/);

      const again = await run(['migrate'], { DATABASE_URL: databaseUrl });
      expect(again.code).toBe(0);
      expect(again.output).toMatch(/"applied":0/);
    } finally {
      up.child.kill('SIGTERM');
    }
    expect(await up.exited).toBe(0);
  });

  it('shows and sets the tool policy: `herald tools`', async () => {
    const env = { DATABASE_URL: databaseUrl };
    expect((await run(['migrate'], env)).code).toBe(0);
    const dir = await mkdtemp(join(tmpdir(), 'herald-tools-'));
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ disabled: 'terminal' }));
    const bad = await run(['tools', 'policy', join(dir, 'bad.json')], env);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/tool_policy\.disabled: /);
    await writeFile(join(dir, 'policy.json'), JSON.stringify({ platforms: { telegram: { disabled: ['clarify'] } }, users: { bob: { disabled: ['todo'] } } }));
    expect((await run(['tools', 'policy', join(dir, 'policy.json')], env)).output).toContain('tool policy of main updated');
    const telegram = await run(['tools', '--platform', 'telegram', '--user', 'bob'], env);
    expect(telegram.code).toBe(0);
    expect(telegram.output).toMatch(/disabled toolsets: clarify, todo/);
    const toolsOf = (output: string) => /^tools: (.*)$/m.exec(output)?.[1]?.split(', ') ?? [];
    expect(toolsOf(telegram.output)).toContain('memory');
    expect(toolsOf(telegram.output)).not.toContain('clarify');
    expect(toolsOf(telegram.output)).not.toContain('todo');
    const api = await run(['tools'], env);
    expect(toolsOf(api.output)).toEqual(expect.arrayContaining(['clarify', 'memory', 'todo']));
  });
});
