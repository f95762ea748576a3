import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../cli/src/commands.ts';
import { EVERYTHING_SERVER } from './support/mcp-servers.ts';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';
import { HERALD_BIN, PROCESS_START_MS } from './support/stack.ts';

interface Run {
  code: number | null;
  output: string;
  /**
   * From the process's first line (its mode line, printed once its code is loaded) to its exit: the
   * part Herald's checks decide. Loading and compiling the sources before it takes 1 s on a quiet
   * machine and several on a loaded one, which a bound on it would measure instead of Herald.
   */
  elapsedMs: number;
}

/** `herald ARGS` in dir with env (DATABASE_URL and REDIS_URL only when env gives them). */
function run(args: string[], env: Record<string, string>, dir?: string): Promise<Run> {
  const base: Record<string, string | undefined> = { ...process.env, HERALD_METRICS_PORT: '0' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'HERALD_DATA_DIR', 'LOG_FORMAT']) delete base[name];
  return new Promise((resolve) => {
    let started: number | undefined;
    const child = spawn(process.execPath, [HERALD_BIN, ...args], { cwd: dir, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      started ??= performance.now();
      output += chunk.toString();
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('exit', (code) => resolve({ code, output, elapsedMs: performance.now() - (started ?? performance.now()) }));
  });
}

/** A TCP server that accepts connections and never answers: a service that hangs. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (bound, read, released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const STACK_TRACE = /^\s+at /m;

describe('the first hour: expected conditions are one line naming the setting', { timeout: 3 * PROCESS_START_MS }, () => {
  let database: TestDatabase;
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    silent = await silentServer();
  });
  afterAll(async () => {
    await silent.close();
    await database.drop();
  });

  it('embedded mode with PORT in use: one line naming PORT, exit 1, no embedded Postgres left behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'herald-port-'));
    await chmod(dir, 0o755);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const result = await run(['up'], { HERALD_DATABASE: 'embedded', HERALD_QUEUE: 'postgres', PORT: String(port) }, dir);
      expect(result.code).toBe(1);
      expect(result.output.trim()).toBe(`herald: PORT: port ${port} on 127.0.0.1 is in use (another Herald, or another program). Stop it, or set PORT to a free port.`);
      expect(existsSync(join(dir, '.herald', 'postgres', 'postmaster.pid'))).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a REDIS_URL that refuses or never answers: named within 10 s, exit 1, no stack trace', async () => {
    const cases: [string, string][] = [
      [`redis://127.0.0.1:${await closedPort()}`, 'connection refused'],
      // A silent server is given up on after 3 s (the reason says so).
      [`redis://127.0.0.1:${silent.port}`, 'no answer within 3 s'],
    ];
    for (const [url, why] of cases) {
      const result = await run(['worker'], { DATABASE_URL: database.url, REDIS_URL: url, HERALD_QUEUE: 'redis' });
      expect(result.code).toBe(1);
      expect(result.output).toMatch(new RegExp(`^herald: REDIS_URL: cannot use Redis at 127\\.0\\.0\\.1:\\d+: ${why}`, 'm'));
      expect(result.output).not.toMatch(STACK_TRACE);
      // Given up on at the check's 3 s deadline, not a hang: well within 10 s of the start line.
      expect(result.elapsedMs).toBeLessThan(10_000);
    }
  });

  it('a DATABASE_URL that refuses, never answers or names an unknown role: named within 10 s, exit 1', async () => {
    const urls = [`postgres://127.0.0.1:${await closedPort()}/herald`, `postgres://127.0.0.1:${silent.port}/herald`, 'postgres://nobody:hunter2-secret@127.0.0.1:5432/herald'];
    const reasons = ['connection refused', 'no answer within 3 s', 'role "nobody" does not exist'];
    for (const [index, url] of urls.entries()) {
      const result = await run(['worker'], { DATABASE_URL: url, HERALD_QUEUE: 'postgres' });
      expect(result.code).toBe(1);
      expect(result.output).toMatch(new RegExp(`^herald: DATABASE_URL: cannot use Postgres at 127\\.0\\.0\\.1:\\d+: ${reasons[index]}`, 'm'));
      expect(result.output).not.toMatch(STACK_TRACE);
      expect(result.output).not.toContain('hunter2');
      // Given up on at the check's 3 s deadline, not a hang: well within 10 s of the start line.
      expect(result.elapsedMs).toBeLessThan(10_000);
    }
    const refused = await run(['migrate'], { DATABASE_URL: urls[0]! });
    expect(refused.output).toMatch(/connection refused/);
    const role = await run(['migrate'], { DATABASE_URL: urls[2]! });
    expect(role.output).toMatch(/role "nobody" does not exist/);
  });

  it('`herald import hermes` of a missing path exits non-zero naming the argument', async () => {
    const result = await run(['import', 'hermes', '/nonexistent-hermes-home', '--user', 'root'], { DATABASE_URL: database.url });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toBe('herald: HERMES_HOME: /nonexistent-hermes-home: no such directory (the path of a Hermes home, e.g. ~/.hermes)');
  });

  it('--help on every command prints its usage and starts nothing', async () => {
    // A DATABASE_URL nothing answers at: a command that started anything would fail instead.
    const unreachable = `postgres://127.0.0.1:${await closedPort()}/x`;
    const entries = Object.entries(COMMANDS);
    for (let i = 0; i < entries.length; i += 4) {
      const batch = entries.slice(i, i + 4);
      const results = await Promise.all(batch.map(([name]) => run([name, '--help'], { DATABASE_URL: unreachable })));
      batch.forEach(([name, command], index) => {
        const result = results[index]!;
        expect(result.code, name).toBe(0);
        expect(result.output, name).toMatch(new RegExp(`herald ${name}`));
        if (command.help === undefined) expect(result.output).toContain(command.summary);
      });
    }
    const chat = await run(['chat', '-h'], {});
    expect(chat.output).not.toContain('Herald chat on');
  });

  it('`herald tools` lists every tool the worker offers, delegate_task included', async () => {
    const result = await run(['tools'], { DATABASE_URL: database.url });
    expect(result.code).toBe(0);
    const tools = /^tools: (.*)$/m.exec(result.output)?.[1]?.split(', ') ?? [];
    expect(tools).toEqual(expect.arrayContaining(['delegate_task', 'memory', 'clarify']));
    expect(result.output).toMatch(/^ {2}delegation +delegate_task/m);
  });

  it("`herald tools` lists the configured MCP servers' tools as the model is offered them, and says which server did not answer", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'herald-tools-mcp-'));
    try {
      const file = join(dir, 'mcp.yaml');
      const servers = { everything: { command: process.execPath, args: [EVERYTHING_SERVER] }, gone: { url: `http://127.0.0.1:${await closedPort()}/mcp`, internal: true } };
      await writeFile(file, JSON.stringify({ servers }));
      const env = { DATABASE_URL: database.url, HERALD_MCP_FILE: file, HERALD_SANDBOX: 'none' };
      const result = await run(['tools'], env);
      expect(result.code, result.output).toBe(0);
      const tools = /^tools: (.*)$/m.exec(result.output)?.[1]?.split(', ') ?? [];
      expect(tools).toEqual(expect.arrayContaining(['delegate_task', 'mcp_everything_echo', 'mcp_everything_get-sum']));
      expect(result.output).toMatch(/^MCP servers: everything; \d+ tools/m);
      expect(result.output).toMatch(/^MCP server gone did not answer \(.*ECONNREFUSED\): its tools are not offered until it does/m);
      expect(result.output).toMatch(/^ {2}herald-core .*@mcp:everything/m);
      const without = await run(['tools', '--no-mcp'], env);
      expect(without.output).not.toContain('mcp_everything_');
      expect(without.output).toContain('MCP servers: not asked (--no-mcp); their tools: herald mcp list');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('HERALD_MODEL without a provider is one clear line', async () => {
    const result = await run(['migrate'], { HERALD_MODEL: 'gpt-4o', DATABASE_URL: database.url });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toBe(
      'herald: invalid configuration: HERALD_MODEL: expected provider/model, e.g. openai/gpt-4.1-mini (the provider openai, anthropic or one named in HERALD_PROVIDERS_FILE)',
    );
  });
});
