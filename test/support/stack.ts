import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig, Shutdown, silentLogger } from '@herald/core';
import type { Config } from '@herald/core';
import { openDb, openProfileCache, queueSettings, startIngress, startReviewer, startScheduler, startWorker } from '@herald/cli';
import type { Db, ProfileCache } from '@herald/db';
import type { ChatInboundDependencies } from '@herald/platforms';
import { openQueueTransport } from '@herald/queue';
import { acceptOptionsFrom } from '@herald/inbox';
import type { FakeLLM } from './fake-llm.ts';
import { createTestDatabase, uniquePrefix } from './test-database.ts';
import type { TestDatabase } from './test-database.ts';
import { waitFor } from './wait.ts';

export { waitFor } from './wait.ts';

/** The CLI from its TypeScript source (no build needed). */
export const HERALD_SOURCE_BIN = fileURLToPath(new URL('../../cli/bin/herald-dev.js', import.meta.url));
/** The compiled CLI (`npm run build`): what the image and production roles run. */
export const HERALD_BUILT_BIN = fileURLToPath(new URL('../../cli/bin/herald.js', import.meta.url));
/**
 * HERALD_TEST_BIN=built (after `npm run build`): the tests run what ships. Every `herald` process
 * is the compiled bundle, and startStack runs its roles as bundle processes instead of in the test
 * process (.ci/run has a pass in this mode).
 */
export const TEST_BUILT = process.env.HERALD_TEST_BIN === 'built';
/** The CLI the tests spawn: the sources through tsx, or the bundle under HERALD_TEST_BIN=built. */
export const HERALD_BIN = TEST_BUILT ? HERALD_BUILT_BIN : HERALD_SOURCE_BIN;

export interface StackOptions {
  /** Extra environment; it wins over what the other options set. */
  env?: Record<string, string>;
  /** In-process workers (1 by default). */
  workers?: number;
  /** Run the scheduler role (the reconciler sweep) in this process too. */
  scheduler?: boolean;
  /** In-process reviewers (background review); none by default. */
  reviewers?: number;
  /** A fake model server to answer every model call; closed when the stack stops. */
  model?: FakeLLM;
  /**
   * The test runs `herald worker` processes (startProcess) and kills or stops them: no worker in
   * this process, and the scheduler's reconciler here, every 300 ms, finds the turns they leave.
   */
  workerProcesses?: boolean;
  /** Load the plugin tools of test-tools.ts (send_payment, slow_lookup, wire_transfer). */
  testTools?: boolean;
  /** The Postgres to make the test database in (a fault test's own server); the shared one by default. */
  adminUrl?: string;
  /** DATABASE_READ_URL from the test database's URL (a streaming replica of `adminUrl`'s server). */
  readUrl?: (databaseUrl: string) => string;
}

/** The roles a test runs as their own processes; each says `<role> started` once it is up. */
export type ProcessRole = 'worker' | 'reviewer' | 'scheduler';

export interface Stack {
  url: string;
  config: Config;
  env: Record<string, string>;
  database: TestDatabase;
  /** The profile cache the in-process roles share (the spawned processes have their own). */
  profiles: ProfileCache;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  patch(path: string, body: unknown): Promise<{ status: number; body: any }>;
  put(path: string, body: unknown): Promise<{ status: number; body: any }>;
  delete(path: string): Promise<{ status: number; body: any }>;
  /** Polls GET /v1/events/:id until the event is done; returns its body. */
  waitForEvent(eventId: string, timeoutMs?: number): Promise<any>;
  /** A `herald <role>` process on this stack's environment, not waited for; stop() kills it. */
  spawn(role: ProcessRole, env?: Record<string, string>): HeraldProcess;
  /** The same, resolved once the process has said it started. */
  startProcess(role: ProcessRole, env?: Record<string, string>): Promise<HeraldProcess>;
  /** The processes spawned through this stack that are still running. */
  processes(): HeraldProcess[];
  /** Kills the processes still running, stops the in-process roles, drops the database. */
  stop(): Promise<void>;
}

/** The environment that points Herald at a fake model server. */
export function modelEnv(fake: FakeLLM): Record<string, string> {
  return fake.provider === 'openai'
    ? { HERALD_MODEL: 'openai/gpt-test', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test' }
    : { HERALD_MODEL: 'anthropic/claude-test', ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-test' };
}

export const TEST_TOKEN = 'test-token-123456';

const TEST_TOOLS_PLUGIN = fileURLToPath(new URL('./test-tools.ts', import.meta.url));

/** The test tools as a plugin the running CLI can load: the bundle runs no TypeScript. */
async function testToolsPlugin(): Promise<string> {
  if (!TEST_BUILT) return TEST_TOOLS_PLUGIN;
  const { compiledPlugin } = await import('./compiled-plugin.ts');
  return compiledPlugin(TEST_TOOLS_PLUGIN);
}

/** The queue mode the test run asked for, passed to in-process roles as to spawned ones. */
export function queueModeEnv(): Record<string, string> {
  const mode = process.env.HERALD_QUEUE;
  return mode === undefined || mode === '' ? {} : { HERALD_QUEUE: mode };
}

function stackEnv(database: TestDatabase, options: StackOptions, plugin: string): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    ...(options.readUrl ? { DATABASE_READ_URL: options.readUrl(database.url) } : {}),
    REDIS_URL: 'redis://127.0.0.1:6379',
    PORT: '0',
    HERALD_API_TOKEN: TEST_TOKEN,
    HERALD_QUEUE_PREFIX: uniquePrefix(),
    HERALD_PROVIDER_RETRY_BASE_MS: '20',
    HERALD_LEASE_TTL_MS: '3000',
    HERALD_SHUTDOWN_TIMEOUT_MS: '8000',
    LOG_LEVEL: 'silent',
    // The mode matrix (.ci/run): HERALD_QUEUE=postgres runs the same tests with the queue on Postgres.
    ...queueModeEnv(),
    // Session workspaces of the file and terminal tools, out of the repository.
    HERALD_WORKSPACE_ROOT: join(tmpdir(), `herald-ws-${database.name}`),
    // Test files run side by side and spawn worker processes: keep well inside max_connections.
    HERALD_DB_POOL_SIZE: '4',
    ...(options.workerProcesses ? { HERALD_RECONCILE_INTERVAL_MS: '300' } : {}),
    ...(options.testTools ? { HERALD_TOOL_PLUGINS: plugin } : {}),
    ...(options.model ? modelEnv(options.model) : {}),
    ...options.env,
  };
}

/** The real ingress and workers in this process, on a fresh database and queue prefix. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const database = await createTestDatabase(options.adminUrl);
  const env = stackEnv(database, options, options.testTools ? await testToolsPlugin() : '');
  const config = loadConfig(env);
  const shutdown = new Shutdown({ logger: silentLogger, deadlineMs: 10_000 });
  const db = openDb(config, silentLogger, shutdown);
  const profiles = await openProfileCache(config, silentLogger, shutdown, db);
  const roles = TEST_BUILT ? await startBuiltRoles(env, options) : undefined;
  const address = roles ? roles.address : await startRolesHere(config, shutdown, db, profiles, options);
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
  const spawned: HeraldProcess[] = [];
  const spawnTracked = (role: ProcessRole, extra: Record<string, string> = {}) => {
    const child = spawnHerald(role, { ...env, LOG_LEVEL: 'info', ...extra });
    spawned.push(child);
    return child;
  };
  return {
    url,
    config,
    env,
    database,
    profiles,
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
    spawn: spawnTracked,
    startProcess: async (role, extra) => {
      const child = spawnTracked(role, extra);
      await untilStarted(child, role);
      return child;
    },
    processes: () => spawned.filter(running),
    async stop() {
      await Promise.all([...spawned, ...(roles?.processes ?? [])].map((child) => stopProcess(child)));
      await shutdown.shutdown();
      await database.drop();
      await options.model?.close();
    },
  };
}

/** The stack's roles in the test process, from the sources; resolves with the ingress's address. */
async function startRolesHere(config: Config, shutdown: Shutdown, db: Db, profiles: ProfileCache, options: StackOptions): Promise<string> {
  const workers = options.workerProcesses ? 0 : (options.workers ?? 1);
  for (let i = 0; i < workers; i++) await startWorker(config, silentLogger, shutdown, db, profiles);
  if (options.scheduler || options.workerProcesses) await startScheduler(config, silentLogger, shutdown, db, profiles);
  for (let i = 0; i < (options.reviewers ?? 0); i++) await startReviewer(config, silentLogger, shutdown, db);
  // Every answer of the API tests is held to its route's contract (services/ingress/src/contracts).
  return startIngress(config, silentLogger, shutdown, db, profiles, { responses: true });
}

/**
 * The same roles as processes of the compiled bundle (HERALD_TEST_BIN=built), one per role
 * instance as a deployment runs them. They are the stack's own: stop() ends them, processes()
 * does not list them.
 */
async function startBuiltRoles(env: Record<string, string>, options: StackOptions): Promise<{ address: string; processes: HeraldProcess[] }> {
  const roles: ProcessRole[] = [
    ...Array.from({ length: options.workerProcesses ? 0 : (options.workers ?? 1) }, () => 'worker' as const),
    ...(options.scheduler || options.workerProcesses ? ['scheduler' as const] : []),
    ...Array.from({ length: options.reviewers ?? 0 }, () => 'reviewer' as const),
  ];
  const processes: HeraldProcess[] = [];
  const start = async (role: string, ready: RegExp) => {
    const child = spawnHerald(role, { ...env, LOG_LEVEL: 'info' });
    processes.push(child);
    const exited = child.exited.then((code) => Promise.reject(new Error(`herald ${role} exited (${code}) before it started: ${child.output()}`)));
    // Only the start waits on it: a later exit (stop() ends the process) is no error.
    exited.catch(() => undefined);
    return Promise.race([waitFor(async () => ready.exec(child.output())?.[1], { timeoutMs: PROCESS_START_MS, what: `${role} start` }), exited]);
  };
  try {
    await Promise.all(roles.map((role) => start(role, new RegExp(`(${role}) started`))));
    return { address: await start('ingress', /ingress listening on (\S+)"/), processes };
  } catch (error) {
    await Promise.all(processes.map((child) => stopProcess(child)));
    throw error;
  }
}

export interface Replica {
  /** The dependencies of a second ingress replica, named 'replica-2', on the stack's queue and database. */
  deps: Omit<ChatInboundDependencies, 'allowedUsers'> & { owner: string };
  /** Closes the replica's queue and its store's connections. */
  close(): Promise<void>;
}

/** What a platform adapter needs to run as a second ingress replica beside the stack's own. */
export function replicaOf(stack: Stack, db: Db = stack.database.db): Replica {
  const transport = openQueueTransport(queueSettings(stack.config));
  const queue = transport.createRunQueue();
  return {
    deps: { owner: 'replica-2', db, queue, notices: transport.bus, queuePrefix: stack.config.redis.queuePrefix, accept: acceptOptionsFrom(stack.config), logger: silentLogger },
    async close() {
      await queue.close();
      await transport.close();
    },
  };
}

export interface HeraldProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

/**
 * A real `herald <role>` process, as a deployment would run it (from source unless `bin` says).
 * `keepOutputChars` keeps only the output's tail: a soak's roles log for half an hour.
 * `launcher` is a command that execs the rest (the soak's pod-memory cgroups); the pid stays node's.
 */
export function spawnHerald(
  role: string,
  env: Record<string, string>,
  bin: string = HERALD_BIN,
  nodeArgs: string[] = [],
  keepOutputChars = Number.POSITIVE_INFINITY,
  launcher: string[] = [],
): HeraldProcess {
  const command = [...launcher, process.execPath, ...nodeArgs, bin, role];
  const child = spawn(command[0]!, command.slice(1), {
    // Worker, reviewer and scheduler processes serve /metrics; several run side by side here.
    env: { ...process.env, HERALD_METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > keepOutputChars) output = output.slice(-keepOutputChars);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return { child, output: () => output, exited };
}

const running = (herald: HeraldProcess) => herald.child.exitCode === null && herald.child.signalCode === null;

/**
 * How long a `herald` process may take to start: it compiles the code base on the way in, which
 * takes tens of seconds when the shared machine is busy. A limit for a hang, not a measurement.
 */
export const PROCESS_START_MS = 120_000;

async function untilStarted(herald: HeraldProcess, role: ProcessRole): Promise<void> {
  await waitFor(async () => herald.output().includes(`${role} started`), { timeoutMs: PROCESS_START_MS, what: `${role} start` });
}

/** A `herald <role>` process, resolved once it has said it started. */
export async function startHeraldProcess(role: ProcessRole, env: Record<string, string>): Promise<HeraldProcess> {
  const herald = spawnHerald(role, { ...env, LOG_LEVEL: 'info' });
  await untilStarted(herald, role);
  return herald;
}

/** Sends the signal unless the process has already exited, and resolves once it has. */
export async function stopProcess(herald: HeraldProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | string> {
  if (running(herald)) herald.child.kill(signal);
  return herald.exited;
}
