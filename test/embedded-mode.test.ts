import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { heraldOnTerminal } from './support/pty.ts';
import { HERALD_BIN, modelEnv, PROCESS_START_MS, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess } from './support/stack.ts';
import { freePort } from './support/ports.ts';

/**
 * The first-minute path: no DATABASE_URL, no REDIS_URL, a fresh directory. This machine runs a
 * Postgres and a Redis on their usual ports (CI's do too), so the test forces the modes that
 * `auto` picks on a machine without them.
 */
describe('embedded mode: herald up with nothing but Node', { timeout: 6 * PROCESS_START_MS }, () => {
  let dir: string;
  let model: FakeLLM;
  let port: string;

  beforeAll(async () => {
    port = String(await freePort());
    dir = await mkdtemp(join(tmpdir(), 'herald-embedded-'));
    // As root the server runs as an unprivileged user, which must be able to enter the directory.
    await chmod(dir, 0o755);
    model = await startFakeOpenAI();
  });
  afterAll(async () => {
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  function herald(role: string, extra: Record<string, string> = {}): HeraldProcess {
    const env: Record<string, string | undefined> = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'HERALD_DATA_DIR', 'HERALD_QUEUE_PREFIX']) delete env[name];
    const child = spawn(process.execPath, [HERALD_BIN, role], {
      cwd: dir,
      env: { ...env, HERALD_DATABASE: 'embedded', HERALD_QUEUE: 'postgres', PORT: port, HERALD_METRICS_PORT: '0', LOG_LEVEL: 'info', ...modelEnv(model), ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    return { child, output: () => output, exited };
  }

  async function untilSaid(process: HeraldProcess, text: string): Promise<void> {
    await waitFor(async () => process.output().includes(text), { timeoutMs: PROCESS_START_MS, what: text });
  }

  const api = async (path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  let sessionId: string;

  it('starts a Postgres of its own under ./.herald, answers through the API, and stops it on SIGTERM', async () => {
    const up = herald('up');
    try {
      await untilSaid(up, 'Herald is up');
      expect(up.output()).toContain('mode: embedded Postgres (data in ./.herald), queue on Postgres (no Redis); to use your own services set DATABASE_URL and REDIS_URL');
      expect(up.output()).toContain('creating the embedded Postgres cluster');
      expect(up.output()).toContain('created the database');
      const sent = await api('/v1/messages?wait=60', { chat_id: 'first-minute', user_id: 'ada', text: 'hello from nowhere' });
      expect(sent.status).toBe(200);
      expect(sent.body.reply.text).toBe('echo: hello from nowhere');
      sessionId = sent.body.session_id;
      const ready = await api('/readyz');
      expect(ready.body).toEqual({ status: 'ready', postgres: 'ok', queue: 'ok' });
    } finally {
      await stopProcess(up, 'SIGTERM');
    }
    expect(await up.exited).toBe(0);
    // A cleanly stopped server removes its lock file; the cluster and its password stay.
    expect(existsSync(join(dir, '.herald', 'postgres', 'postmaster.pid'))).toBe(false);
    expect(existsSync(join(dir, '.herald', 'postgres', 'PG_VERSION'))).toBe(true);
    expect((await stat(join(dir, '.herald', 'postgres.password'))).mode & 0o077).toBe(0);
    expect(await readFile(join(dir, '.herald', 'postgres.log'), 'utf8')).toMatch(/database system is shut down/);
  });

  it('starts again on the same data, finds the session, and a separate worker process joins the same server', async () => {
    const up = herald('up', { HERALD_WORKER_CONCURRENCY: '1' });
    let worker: HeraldProcess | undefined;
    try {
      await untilSaid(up, 'Herald is up');
      expect(up.output()).not.toContain('creating the embedded Postgres cluster');
      expect(up.output()).not.toContain('created the database');
      const transcript = await api(`/v1/sessions/${sessionId}/messages`);
      expect(transcript.status).toBe(200);
      expect(transcript.body.messages.map((m: any) => m.content)).toEqual(['hello from nowhere', 'echo: hello from nowhere']);

      worker = herald('worker');
      await untilSaid(worker, 'worker started');
      // It joined the running server rather than starting a second one.
      expect(worker.output()).not.toContain('embedded Postgres started');
      const alive = await waitFor(
        async () => {
          const status = await api('/v1/admin/status');
          return status.body.roles?.worker === 2 ? status.body : undefined;
        },
        { timeoutMs: 30_000, what: 'two live workers' },
      );
      expect(alive.roles.ingress).toBe(1);
      const again = await api('/v1/messages?wait=60', { chat_id: 'first-minute', user_id: 'ada', text: 'still there?' });
      expect(again.body.session_id).toBe(sessionId);
      expect(again.body.reply.text).toBe('echo: still there?');
    } finally {
      if (worker) await stopProcess(worker, 'SIGTERM');
      await stopProcess(up, 'SIGTERM');
    }
    expect(await up.exited).toBe(0);
    expect(existsSync(join(dir, '.herald', 'postgres', 'postmaster.pid'))).toBe(false);
  });

  it('stops quietly: Ctrl-C at a terminal and SIGTERM from a supervisor print no warning and no stack trace', async () => {
    const onTerminal = heraldOnTerminal(['up'], { HERALD_DATABASE: 'embedded', HERALD_QUEUE: 'postgres', PORT: port, HERALD_METRICS_PORT: '0', LOG_LEVEL: 'info', ...modelEnv(model) }, { cwd: dir });
    await onTerminal.until('Herald is up', { timeoutMs: PROCESS_START_MS });
    const typedAt = onTerminal.screen().length;
    onTerminal.type('\x03');
    expect(await onTerminal.exited).toBe(0);
    const stopped = onTerminal.screen().slice(typedAt);
    expect(stopped).toContain('shutting down');
    expect(stopped).not.toMatch(/WARN|ERROR|^\s+at /m);

    const up = herald('up');
    await untilSaid(up, 'Herald is up');
    const signalledAt = up.output().length;
    up.child.kill('SIGTERM');
    expect(await up.exited).toBe(0);
    const logged = up.output().slice(signalledAt);
    expect(logged).toContain('shutting down');
    // JSON lines: no warn (40), error (50) or fatal (60), and no stack in any of them.
    expect(logged).not.toMatch(/"level":[456]0|\\n\s+at |^\s+at /m);
    expect(existsSync(join(dir, '.herald', 'postgres', 'postmaster.pid'))).toBe(false);
  });
});

/**
 * The common first run on a fresh server: root, in a directory only root can enter (like /root).
 * Postgres refuses to run as root and its usual account cannot enter there: the server runs in a
 * user namespace as an unprivileged id over root's own files, and the start line says so.
 */
describe.skipIf(process.getuid?.() !== 0)('embedded mode as root from a mode-0700 directory', { timeout: 4 * PROCESS_START_MS }, () => {
  let outer: string;
  let dir: string;
  let model: FakeLLM;
  let port: string;

  beforeAll(async () => {
    port = String(await freePort());
    outer = await mkdtemp(join(tmpdir(), 'herald-root-only-'));
    dir = join(outer, 'home');
    await mkdir(dir, { mode: 0o700 });
    await chmod(outer, 0o700);
    model = await startFakeOpenAI();
  });
  afterAll(async () => {
    await model.close();
    await rm(outer, { recursive: true, force: true });
  });

  const run = (command: string): HeraldProcess => {
    const env: Record<string, string | undefined> = { ...process.env };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'HERALD_DATA_DIR', 'HERALD_QUEUE_PREFIX']) delete env[name];
    const child = spawn(process.execPath, [HERALD_BIN, command], {
      cwd: dir,
      env: { ...env, HERALD_DATABASE: 'embedded', HERALD_QUEUE: 'postgres', PORT: port, HERALD_METRICS_PORT: '0', LOG_LEVEL: 'info', ...modelEnv(model) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    return { child, output: () => output, exited };
  };
  const note = 'its server runs in a user namespace as an unprivileged id, since the postgres user cannot enter';

  it('herald doctor says how the server will run there, and passes', async () => {
    const doctor = run('doctor');
    expect(await doctor.exited, doctor.output()).toBe(0);
    expect(doctor.output()).toContain(`mode: embedded Postgres (data in ./.herald; ${note} ${dir})`);
    expect(doctor.output()).toMatch(/ok +embedded server user: its server runs in a user namespace/);
  });

  it('herald up starts with nothing set, says where the data is and how the server runs, and answers', async () => {
    const up = run('up');
    try {
      await Promise.race([
        waitFor(async () => up.output().includes('Herald is up'), { timeoutMs: PROCESS_START_MS, what: 'Herald is up' }),
        up.exited.then((code) => Promise.reject(new Error(`herald up exited with ${code}: ${up.output()}`))),
      ]);
      expect(up.output()).toContain(`mode: embedded Postgres (data in ./.herald; ${note} ${dir})`);
      const response = await fetch(`http://127.0.0.1:${port}/v1/messages?wait=60`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: 'root-first-run', user_id: 'root', text: 'hello from /root' }),
      });
      expect(((await response.json()) as { reply: { text: string } }).reply.text).toBe('echo: hello from /root');
      // The cluster stays root's, in the directory asked for, readable by no one else.
      const cluster = await stat(join(dir, '.herald', 'postgres'));
      expect(cluster.uid).toBe(0);
      expect(cluster.mode & 0o077).toBe(0);
    } finally {
      await stopProcess(up, 'SIGTERM');
    }
    expect(await up.exited).toBe(0);
    expect(existsSync(join(dir, '.herald', 'postgres', 'postmaster.pid'))).toBe(false);
  });
});

/** `herald ARGS` in dir with no DATABASE_URL, REDIS_URL or mode set: what a newcomer's shell holds. */
function newcomer(dir: string, args: string[], extra: Record<string, string> = {}): HeraldProcess {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'HERALD_DATA_DIR', 'HERALD_DATABASE', 'HERALD_QUEUE', 'HERALD_QUEUE_PREFIX']) delete env[name];
  const child = spawn(process.execPath, [HERALD_BIN, ...args], { cwd: dir, env: { ...env, LOG_LEVEL: 'info', ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

describe('the mode chosen openly, and embedded commands leave nothing running', { timeout: 6 * PROCESS_START_MS }, () => {
  let dir: string;
  const pidFile = () => join(dir, '.herald', 'postgres', 'postmaster.pid');
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herald-mode-'));
    await chmod(dir, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('without DATABASE_URL the local Postgres (this machine runs one on 5432) is named but not taken; the line says why', async () => {
    const doctor = newcomer(dir, ['doctor']);
    await doctor.exited;
    const line = doctor.output().split('\n')[0];
    expect(line).toMatch(/^mode: embedded Postgres \(data in \.\/\.herald\), queue on Postgres \(no Redis\); /);
    expect(line).toContain('chosen because DATABASE_URL is not set and REDIS_URL is not set');
    expect(line).toContain('a Postgres answers on 127.0.0.1:5432 but is not used unless you set DATABASE_URL (or HERALD_DATABASE=external)');
    // Asked for (as `herald init` writes it into .env): the local one is used, and the line says so.
    const asked = await mkdtemp(join(tmpdir(), 'herald-mode-env-'));
    try {
      await writeFile(join(asked, '.env'), 'DATABASE_URL=postgres://127.0.0.1:5432/herald_first_hour\n', { mode: 0o600 });
      const withEnv = newcomer(asked, ['doctor']);
      await withEnv.exited;
      expect(withEnv.output().split('\n')[0]).toMatch(/^mode: external Postgres at 127\.0\.0\.1:5432\/herald_first_hour, .*chosen because DATABASE_URL is set/);
    } finally {
      await rm(asked, { recursive: true, force: true });
    }
  });

  it('a usage error in embedded mode stops the embedded Postgres it started', async () => {
    const cron = newcomer(dir, ['cron', 'frobnicate']);
    expect(await cron.exited).toBe(2);
    // It did start one (the cluster is there), and it is not running any more.
    expect(existsSync(join(dir, '.herald', 'postgres', 'PG_VERSION'))).toBe(true);
    // A one-shot command prints what it was asked for, not the embedded Postgres's start-up.
    expect(cron.output()).not.toMatch(/^\{"level"/m);
    expect(cron.output()).toContain("herald: unknown cron subcommand 'frobnicate'");
    expect(existsSync(pidFile())).toBe(false);
  });

  it('Ctrl-C during an embedded command stops the embedded Postgres and exits 130', async () => {
    const migrate = newcomer(dir, ['migrate']);
    await waitFor(async () => migrate.output().includes('embedded Postgres started'), { timeoutMs: PROCESS_START_MS, what: 'embedded Postgres start' });
    migrate.child.kill('SIGINT');
    expect(await migrate.exited).toBe(130);
    expect(migrate.output()).not.toMatch(/^\s+at /m);
    expect(existsSync(pidFile())).toBe(false);
  });
});
