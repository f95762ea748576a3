import { execFileSync, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import type { Logger } from '@herald/core';
import { postgresBinaries } from './postgres-binaries.ts';

/** The superuser initdb creates, and the database Herald uses, in the embedded cluster. */
const EMBEDDED_USER = 'herald';
const EMBEDDED_DATABASE = 'herald';
/** The account the server runs as when Herald runs as root (Postgres refuses to run as root). */
const SERVER_ACCOUNTS = ['postgres', 'herald-postgres'] as const;
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

export interface EmbeddedPostgres {
  /** postgres://herald:<password>@127.0.0.1:<port>/herald; holds the password, so never log it. */
  url: string;
  port: number;
  /** True when this process started the server (and stops it); false when it joined a running one. */
  owned: boolean;
  /** How the server runs when that is worth a word in the start line (a user namespace, as root). */
  note?: string;
  stop(): Promise<void>;
}

interface Account {
  uid: number;
  gid: number;
  name: string;
}

/** Where a data directory keeps the cluster, its password and the server's log. */
export function embeddedPaths(dataDir: string) {
  return {
    cluster: join(dataDir, 'postgres'),
    password: join(dataDir, 'postgres.password'),
    log: join(dataDir, 'postgres.log'),
    /** The pid of the Herald process that stops the server on exit. */
    owner: join(dataDir, 'postgres.owner'),
  };
}

function urlFor(password: string, port: number, database: string = EMBEDDED_DATABASE): string {
  return `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

export function portAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no free port'))));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by the server account.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Fast shutdown of a server this process did not start (its starter died): by pid, then wait. */
async function stopByPid(pid: number): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (alive(pid) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
}

/** The server already running on this cluster (another Herald process started it), if any. */
export async function runningServer(cluster: string): Promise<{ pid: number; port: number } | null> {
  let lines: string[];
  try {
    lines = readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || pid <= 0 || !alive(pid)) return null;
  return (await portAnswers('127.0.0.1', port)) ? { pid, port } : null;
}

function accountId(name: string): Account | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid, gid, name };
  } catch {
    return null;
  }
}

/** An existing account the server may run as (none created here). */
function existingAccount(): Account | null {
  for (const name of SERVER_ACCOUNTS) {
    const account = accountId(name);
    if (account) return account;
  }
  return null;
}

/**
 * As root, the unprivileged account the server runs as: the system's `postgres` user, or a system
 * user `herald-postgres` created once (no home, no login shell).
 */
function serverAccount(logger: Logger): Account {
  const found = existingAccount();
  if (found) return found;
  const name = SERVER_ACCOUNTS[1];
  execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', name], { stdio: 'ignore' });
  logger.info({ account: name }, 'running as root: created the system user the embedded Postgres runs as');
  const account = accountId(name);
  if (!account) throw new Error(`could not create the system user ${name} for the embedded Postgres`);
  return account;
}

/** The first directory on the way down to `dir` that `account` may not enter, or null. */
function unreachableBy(dir: string, account: Account | null): string | null {
  for (let current = resolve(dir); current !== dirname(current); current = dirname(current)) {
    // Not made yet (doctor on a first run): it will be made with the modes below, its parents decide.
    if (!existsSync(current)) continue;
    const stat = statSync(current);
    const searchable = account && stat.uid === account.uid ? (stat.mode & 0o100) !== 0 : (stat.mode & 0o001) !== 0;
    if (!searchable) return current;
  }
  return null;
}

/**
 * How the server runs: as this user (not root); as root, as the unprivileged account (Postgres
 * refuses root) where that account can reach the cluster and the binaries; otherwise in a user
 * namespace where it is an unprivileged id while its files stay root's, so that a first run from
 * a directory only root can enter (/root) needs nothing set. `note` says so in the start line.
 */
export type ServerRunAs = { kind: 'self' } | { kind: 'account'; account: Account } | { kind: 'namespace'; inside: Account; note: string };

let namespacesWork: boolean | undefined;

/** Whether this kernel lets root start a process in a user namespace with `unshare` (util-linux). */
function userNamespacesWork(inside: Account): boolean {
  namespacesWork ??= spawnSync('unshare', [...namespaceArgs(inside), 'true'], { stdio: 'ignore' }).status === 0;
  return namespacesWork;
}

function namespaceArgs(inside: Account): string[] {
  return ['--user', `--map-user=${inside.uid}`, `--map-group=${inside.gid}`];
}

/**
 * Decides how the server of `cluster` runs (see ServerRunAs). `create` allows creating the system
 * account; `herald doctor` passes false and only reports.
 */
export async function serverRunAs(cluster: string, logger: Logger, create = true): Promise<ServerRunAs> {
  if (process.getuid?.() !== 0) return { kind: 'self' };
  const existing = existsSync(join(cluster, 'PG_VERSION'));
  // A cluster made by an earlier run keeps its owner: root's own files mean a namespaced server.
  const rootOwned = existing && statSync(cluster).uid === 0;
  const account = rootOwned ? null : create ? serverAccount(logger) : existingAccount();
  const { postgres } = await postgresBinaries();
  const blocked = rootOwned ? dirname(cluster) : (unreachableBy(dirname(cluster), account) ?? unreachableBy(dirname(postgres), account));
  if (blocked === null && account) return { kind: 'account', account };
  const inside = existingAccount() ?? { uid: 65534, gid: 65534, name: 'nobody' };
  const who = account?.name ?? SERVER_ACCOUNTS[0];
  if (!userNamespacesWork(inside)) {
    throw new Error(
      `the embedded Postgres runs as the unprivileged user ${who} (Postgres refuses root), which cannot enter ${blocked}, ` +
        "and this system allows no user namespace to run it as root's own files: " +
        'set HERALD_DATA_DIR to a directory it can reach (e.g. /var/lib/herald), or run Herald as a normal user',
    );
  }
  const reason = rootOwned ? "its files are root's" : `the ${who} user cannot enter ${blocked}`;
  return { kind: 'namespace', inside, note: `its server runs in a user namespace as an unprivileged id, since ${reason}` };
}

/** Spawns one of the server's programs as `runAs` says. */
function spawnAs(program: string, args: string[], runAs: ServerRunAs, options: SpawnOptions): ChildProcess {
  if (runAs.kind === 'namespace') return spawn('unshare', [...namespaceArgs(runAs.inside), program, ...args], options);
  return spawn(program, args, runAs.kind === 'account' ? { ...options, uid: runAs.account.uid, gid: runAs.account.gid } : options);
}

function chownFor(path: string, runAs: ServerRunAs): void {
  if (runAs.kind === 'account') chownSync(path, runAs.account.uid, runAs.account.gid);
}

function passwordOf(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const password = randomBytes(18).toString('base64url');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/** Runs one of the server's programs to its end, as the server account; rejects with its output. */
function runToEnd(program: string, args: string[], runAs: ServerRunAs): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawnAs(program, args, runAs, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (!child.stdout || !child.stderr) return fail(new Error(`${program}: no output streams`));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', fail);
    child.once('close', (code) => (code === 0 ? done() : fail(new Error(`${program} exited with ${code}: ${output.trim().slice(-2000)}`))));
  });
}

async function initialise(paths: ReturnType<typeof embeddedPaths>, password: string, runAs: ServerRunAs, logger: Logger): Promise<void> {
  const { initdb } = await postgresBinaries();
  mkdirSync(paths.cluster, { recursive: true, mode: 0o700 });
  // initdb reads the password from a file the server account can read, removed right after.
  const pwfile = join(paths.cluster, '..', `.initdb-${randomBytes(4).toString('hex')}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  chownFor(paths.cluster, runAs);
  chownFor(pwfile, runAs);
  try {
    logger.info({ cluster: paths.cluster }, 'creating the embedded Postgres cluster (first run only)');
    await runToEnd(initdb, [`--pgdata=${paths.cluster}`, `--username=${EMBEDDED_USER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale'], runAs);
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/** True once the server takes queries (it accepts TCP a moment before it leaves recovery). */
async function takesQueries(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Waits for the server at `url` to take queries; rejects early when `child` (if given) exits. */
function waitUntilReady(url: string, logFile: string, child?: ChildProcess): Promise<void> {
  const started = Date.now();
  return new Promise((done, fail) => {
    let exited = false;
    child?.once('exit', () => (exited = true));
    const check = async () => {
      if (exited) return fail(new Error(`the embedded Postgres exited at start; its log (${logFile}) ends: ${tail(logFile)}`));
      if (await takesQueries(url)) return done();
      if (Date.now() - started > READY_TIMEOUT_MS) return fail(new Error(`the embedded Postgres did not answer within ${READY_TIMEOUT_MS} ms; see ${logFile}`));
      setTimeout(() => void check(), 100);
    };
    void check();
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-5).join(' | ');
  } catch {
    return '(no log)';
  }
}

async function launch(paths: ReturnType<typeof embeddedPaths>, port: number, runAs: ServerRunAs): Promise<ChildProcess> {
  const { postgres } = await postgresBinaries();
  const log = openSync(paths.log, 'a');
  chownFor(paths.log, runAs);
  // Detached, in its own process group: Ctrl-C reaches Herald only, and Herald stops the server
  // after its own shutdown. TCP on loopback only, no Unix socket to clash with a system Postgres.
  // In a namespace `unshare` execs the server in place: the child's pid is the postmaster's.
  const child = spawnAs(postgres, ['-D', paths.cluster, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'], runAs, {
    detached: true,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  return child;
}

function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    // SIGINT is Postgres's fast shutdown: open sessions end, everything committed is on disk.
    child.kill('SIGINT');
  });
}

/**
 * Starts the embedded Postgres of `dataDir`, or joins the one another Herald process started on it
 * (processes of one data directory share one server; the one that started it stops it on exit).
 * The cluster is created on first use and kept between runs.
 */
export async function startEmbeddedPostgres(dataDir: string, logger: Logger): Promise<EmbeddedPostgres> {
  const paths = embeddedPaths(resolve(dataDir));
  mkdirSync(dirname(paths.cluster), { recursive: true, mode: 0o711 });
  const password = passwordOf(paths.password);
  const runAs = await serverRunAs(paths.cluster, logger);
  const note = runAs.kind === 'namespace' ? { note: runAs.note } : {};
  const joined = async (): Promise<EmbeddedPostgres | null> => {
    const running = await runningServer(paths.cluster);
    if (!running) return null;
    // The maintenance database: Herald's own may not exist yet.
    await waitUntilReady(urlFor(password, running.port, 'postgres'), paths.log);
    const owner = Number(readFileSync(paths.owner, { encoding: 'utf8', flag: 'a+' }).trim());
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) {
      return { url: urlFor(password, running.port), port: running.port, owned: false, stop: async () => undefined, ...note };
    }
    // Its starter died without stopping it (killed): this process adopts it and stops it on exit.
    writeFileSync(paths.owner, String(process.pid));
    logger.info({ port: running.port }, 'adopted the embedded Postgres its starter left running');
    const stop = async () => {
      await stopByPid(running.pid);
      rmSync(paths.owner, { force: true });
    };
    return { url: urlFor(password, running.port), port: running.port, owned: true, stop, ...note };
  };
  const existing = await joined();
  if (existing) return existing;
  if (!existsSync(join(paths.cluster, 'PG_VERSION'))) await initialise(paths, password, runAs, logger);
  const port = await freePort();
  const child = await launch(paths, port, runAs);
  // Before it is ready, so a process joining meanwhile sees a live owner and does not adopt it.
  writeFileSync(paths.owner, String(process.pid));
  try {
    await waitUntilReady(urlFor(password, port, 'postgres'), paths.log, child);
  } catch (error) {
    // Two processes starting at once: the other one won the cluster's lock file. Join it.
    const other = await joined();
    if (other) return other;
    throw error;
  }
  logger.info({ port, dataDir: dirname(paths.cluster) }, 'embedded Postgres started');
  const stop = async () => {
    await stopServer(child);
    rmSync(paths.owner, { force: true });
  };
  return { url: urlFor(password, port), port, owned: true, stop, ...note };
}
