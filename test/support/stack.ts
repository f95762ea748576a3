import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig, Shutdown, silentLogger } from '@herald/core';
import type { Config } from '@herald/core';
import { openDb, startIngress, startReviewer, startScheduler, startWorker } from '@herald/cli';
import { createTestDatabase, uniquePrefix } from './test-database.ts';
import type { TestDatabase } from './test-database.ts';

export const HERALD_BIN = fileURLToPath(new URL('../../cli/bin/herald.js', import.meta.url));

export interface StackOptions {
  /** Extra environment, e.g. HERALD_MODEL and OPENAI_BASE_URL pointing at a fake. */
  env?: Record<string, string>;
  /** In-process workers; 0 when the test spawns worker processes itself. */
  workers?: number;
  /** Run the scheduler role (the reconciler sweep) in this process too. */
  scheduler?: boolean;
  /** In-process reviewers (background review); none by default. */
  reviewers?: number;
}

export interface Stack {
  url: string;
  config: Config;
  env: Record<string, string>;
  database: TestDatabase;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  patch(path: string, body: unknown): Promise<{ status: number; body: any }>;
  put(path: string, body: unknown): Promise<{ status: number; body: any }>;
  delete(path: string): Promise<{ status: number; body: any }>;
  /** Polls GET /v1/events/:id until the event is done; returns its body. */
  waitForEvent(eventId: string, timeoutMs?: number): Promise<any>;
  stop(): Promise<void>;
}

export const TEST_TOKEN = 'test-token-123456';

export const TEST_TOOLS_PLUGIN = fileURLToPath(new URL('./test-tools.ts', import.meta.url));

/** The real ingress and workers in this process, on a fresh database and queue prefix. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const database = await createTestDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    PORT: '0',
    HERALD_API_TOKEN: TEST_TOKEN,
    HERALD_QUEUE_PREFIX: uniquePrefix(),
    HERALD_PROVIDER_RETRY_BASE_MS: '20',
    HERALD_LEASE_TTL_MS: '3000',
    HERALD_SHUTDOWN_TIMEOUT_MS: '8000',
    LOG_LEVEL: 'silent',
    // Session workspaces of the file and terminal tools, out of the repository.
    HERALD_WORKSPACE_ROOT: join(tmpdir(), `herald-ws-${database.name}`),
    // Test files run side by side and spawn worker processes: keep well inside max_connections.
    HERALD_DB_POOL_SIZE: '4',
    ...options.env,
  };
  const config = loadConfig(env);
  const shutdown = new Shutdown({ logger: silentLogger, deadlineMs: 10_000 });
  const db = openDb(config, silentLogger, shutdown);
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker(config, silentLogger, shutdown, db);
  if (options.scheduler) await startScheduler(config, silentLogger, shutdown, db);
  for (let i = 0; i < (options.reviewers ?? 0); i++) await startReviewer(config, silentLogger, shutdown, db);
  const address = await startIngress(config, silentLogger, shutdown, db);
  const url = address.replace('0.0.0.0', '127.0.0.1');
  const auth = { authorization: `Bearer ${TEST_TOKEN}` };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON; keep the text
    }
    return { status: response.status, body: parsed as any };
  };
  return {
    url,
    config,
    env,
    database,
    post: (path, body, headers) => call('POST', path, body, headers),
    get: (path, headers) => call('GET', path, undefined, headers),
    patch: (path, body) => call('PATCH', path, body),
    put: (path, body) => call('PUT', path, body),
    delete: (path) => call('DELETE', path),
    waitForEvent: (eventId, timeoutMs = 30_000) =>
      waitFor(
        async () => {
          const event = (await call('GET', `/v1/events/${eventId}`)).body;
          return event?.status === 'done' ? event : undefined;
        },
        { timeoutMs, what: `event ${eventId}` },
      ),
    async stop() {
      await shutdown.shutdown();
      await database.drop();
    },
  };
}

export interface HeraldProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

/** A real `herald <role>` process, as a deployment would run it. */
export function spawnHerald(role: string, env: Record<string, string>): HeraldProcess {
  const child = spawn(process.execPath, [HERALD_BIN, role], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return { child, output: () => output, exited };
}

/** A `herald reviewer` process, resolved once it has said it started. */
export async function startReviewerProcess(env: Record<string, string>): Promise<HeraldProcess> {
  const reviewer = spawnHerald('reviewer', { ...env, LOG_LEVEL: 'info' });
  await waitFor(async () => reviewer.output().includes('reviewer started'), { timeoutMs: 30_000, what: 'reviewer start' });
  return reviewer;
}

/** A `herald worker` process, resolved once it has said it started. */
export async function startWorkerProcess(env: Record<string, string>): Promise<HeraldProcess> {
  const worker = spawnHerald('worker', { ...env, LOG_LEVEL: 'info' });
  await waitFor(async () => worker.output().includes('worker started'), { timeoutMs: 30_000, what: 'worker start' });
  return worker;
}

export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      // Chaos tests check while connections are being killed: a failed check is "not yet".
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
