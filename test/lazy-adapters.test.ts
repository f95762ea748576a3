import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HERALD_BIN, spawnHerald, stopProcess, TEST_TOKEN, queueModeEnv, waitFor } from './support/stack.ts';
import { createTestDatabase, uniquePrefix } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';

// Loaded into the process with --import: every package it loads, CommonJS (require's cache, which
// ESM imports of a CommonJS package go through too) and ESM (a resolve hook, which sees every
// import), written to $LOADED_FILE on exit, one name per line.
const REPORT = `data:text/javascript,${encodeURIComponent(`
import { createRequire, register } from 'node:module';
import { appendFileSync } from 'node:fs';
const out = process.env.LOADED_FILE;
const name = (file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1];
register('data:text/javascript,' + encodeURIComponent(
  'import { appendFileSync } from "node:fs";' +
  'export async function resolve(specifier, context, next) {' +
  '  const result = await next(specifier, context);' +
  '  const m = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)/.exec(result.url);' +
  '  if (m) appendFileSync(' + JSON.stringify(out) + ', m[1] + "\\\\n");' +
  '  return result;' +
  '}'));
const require = createRequire(process.cwd() + '/package.json');
process.on('exit', () => {
  appendFileSync(out, Object.keys(require.cache).map(name).filter(Boolean).join('\\n') + '\\n');
});`)}`;

function readLoaded(file: string): string[] {
  const names = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  rmSync(file, { force: true });
  return names;
}

function loadedBy(args: string[], env: Record<string, string> = {}): string[] {
  const file = join(tmpdir(), `herald-loaded-${uniquePrefix()}`);
  const run = spawnSync(process.execPath, ['--import', REPORT, HERALD_BIN, ...args], {
    env: { ...process.env, DATABASE_URL: 'postgres://127.0.0.1:1/none', LOADED_FILE: file, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`herald ${args.join(' ')} failed: ${run.stderr.slice(-2000)}`);
  return readLoaded(file);
}

const READY: Record<string, string> = { ingress: 'ingress listening', worker: 'worker started', reviewer: 'reviewer started', scheduler: 'scheduler started' };

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await database?.drop();
});

/** The packages a role process has loaded once it is ready (it is then stopped with SIGTERM). */
async function loadedByRole(role: string): Promise<string[]> {
  const file = join(tmpdir(), `herald-loaded-${uniquePrefix()}`);
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    HERALD_QUEUE_PREFIX: uniquePrefix(),
    HERALD_API_TOKEN: TEST_TOKEN,
    PORT: '0',
    HERALD_DB_POOL_SIZE: '2',
    HERALD_MODEL: 'openai/gpt-test',
    OPENAI_API_KEY: 'sk-test',
    LOG_LEVEL: 'info',
    LOADED_FILE: file,
    ...queueModeEnv(),
  };
  const child = spawnHerald(role, env, HERALD_BIN, ['--import', REPORT]);
  try {
    await waitFor(async () => child.output().includes(READY[role]!) || child.child.exitCode !== null, { timeoutMs: 120_000, what: `${role} start` });
    if (!child.output().includes(READY[role]!)) throw new Error(`${role} exited: ${child.output().slice(-2000)}`);
  } finally {
    await stopProcess(child, 'SIGTERM');
  }
  return readLoaded(file);
}

describe('what a process loads at start', () => {
  it('leaves discord.js, grammy and the Anthropic SDK unloaded without a platform or an Anthropic model, and a command loads no role', () => {
    const loaded = loadedBy(['help'], { HERALD_MODEL: 'openai/gpt-test', OPENAI_API_KEY: 'sk-test' });
    expect(loaded).toContain('pg');
    for (const name of ['discord.js', 'grammy', '@anthropic-ai/sdk', 'fastify', 'openai', 'bullmq']) expect(loaded).not.toContain(name);
  }, 150_000);

  it("loads only each role's own packages: a worker no HTTP stack, an ingress no model SDK, neither the adapters", async () => {
    const worker = await loadedByRole('worker');
    expect(worker).toContain('openai');
    expect(worker).toContain('bullmq');
    for (const name of ['fastify', '@bull-board/api', '@fastify/static', 'discord.js', 'grammy', '@anthropic-ai/sdk']) expect(worker, name).not.toContain(name);
    const ingress = await loadedByRole('ingress');
    expect(ingress).toContain('fastify');
    for (const name of ['openai', '@anthropic-ai/sdk', 'discord.js', 'grammy']) expect(ingress, name).not.toContain(name);
    const reviewer = await loadedByRole('reviewer');
    for (const name of ['fastify', '@bull-board/api', 'discord.js', 'grammy']) expect(reviewer, name).not.toContain(name);
  }, 300_000);
});
