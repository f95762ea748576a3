import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniquePrefix } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';
import { HERALD_BIN, PROCESS_START_MS, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess } from './support/stack.ts';

/** A role process with nothing set about metrics (no HERALD_METRICS_PORT, no HERALD_METRICS_HOST). */
function role(name: string, env: Record<string, string>): HeraldProcess {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const variable of ['HERALD_METRICS_PORT', 'HERALD_METRICS_HOST', 'REDIS_URL']) delete base[variable];
  const child = spawn(process.execPath, [HERALD_BIN, name], { env: { ...base, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

/** The first address of this machine other than loopback, if it has one. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && !entry.internal && entry.family === 'IPv4')?.address;
}

function refuses(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('several roles on one host with nothing set', { timeout: 3 * PROCESS_START_MS }, () => {
  let database: TestDatabase;
  const started: HeraldProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const process of started) await stopProcess(process, 'SIGKILL');
    await database.drop();
  });

  it('two workers and a scheduler start side by side: metrics on loopback, each on its own port, said in the start line', async () => {
    const env = { DATABASE_URL: database.url, HERALD_QUEUE: 'postgres', HERALD_QUEUE_PREFIX: uniquePrefix() };
    const names = ['worker', 'worker', 'scheduler'];
    for (const name of names) {
      const process = role(name, env);
      started.push(process);
      // One after the other, as a person would start them in three terminals.
      await waitFor(async () => process.output().includes(`${name} started`) || process.child.exitCode !== null, { timeoutMs: PROCESS_START_MS, what: `${name} start` });
      expect(process.child.exitCode, process.output()).toBeNull();
    }
    const ports = started.map((process, index) => {
      const line = new RegExp(`${names[index]} started; metrics and health on port (\\d+) at 127\\.0\\.0\\.1`).exec(process.output());
      expect(line, process.output()).not.toBeNull();
      return Number(line![1]);
    });
    expect(new Set(ports).size).toBe(3);
    // At most one of them got the default port; the others say they took the next free one.
    const moved = started.filter((process) => /\(9464 is in use on this host\)/.test(process.output()));
    expect(moved.length).toBeGreaterThanOrEqual(2);
    for (const port of ports) {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const outside = outsideAddress();
      if (outside !== undefined) expect(await refuses(outside, port), `${outside}:${port}`).toBe(true);
    }
  });

  it('a HERALD_METRICS_PORT set and in use is one line naming it, exit 1', async () => {
    const busy = Number(/metrics and health on port (\d+)/.exec(started[0]!.output())![1]);
    const process = role('worker', { DATABASE_URL: database.url, HERALD_QUEUE: 'postgres', HERALD_METRICS_PORT: String(busy) });
    expect(await process.exited).toBe(1);
    expect(process.output()).toContain(`herald: HERALD_METRICS_PORT: port ${busy} on 127.0.0.1 is in use. Set HERALD_METRICS_PORT to a free port, or 0 for any.`);
    expect(process.output()).not.toMatch(/^\s+at /m);
  });
});
