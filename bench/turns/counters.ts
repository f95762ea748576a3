import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { waitFor } from '../../test/support/wait.ts';

const PRELOAD = fileURLToPath(new URL('./count-statements.mjs', import.meta.url));

/**
 * SQL statements per role process: each process loads count-statements.mjs and writes its count on
 * SIGUSR2. `env` goes into the role processes' environment.
 */
export class StatementCounter {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  static async create(): Promise<StatementCounter> {
    return new StatementCounter(await mkdtemp(join(tmpdir(), 'herald-bench-sql-')));
  }

  get env(): Record<string, string> {
    return { BENCH_COUNT_DIR: this.dir, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim() };
  }

  /** The statements the given processes have sent so far, summed. */
  async total(pids: number[]): Promise<number> {
    const counts = await Promise.all(
      pids.map(async (pid) => {
        const file = join(this.dir, String(pid));
        await rm(file, { force: true });
        process.kill(pid, 'SIGUSR2');
        const text = await waitFor(async () => readFile(file, 'utf8').catch(() => undefined), { timeoutMs: 5_000, what: `statement count of ${pid}` });
        return Number(text);
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * A redis-server of the benchmark's own: INFO commandstats and its CPU are then the pipelines'
 * alone, not the other work on the shared Redis. No persistence, as a cache-only deployment.
 */
export class PrivateRedis {
  readonly url: string;
  readonly #child: ChildProcess;
  readonly #client: Redis;

  private constructor(url: string, child: ChildProcess, client: Redis) {
    this.url = url;
    this.#child = child;
    this.#client = client;
  }

  static async start(): Promise<PrivateRedis> {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const failed = new Promise<never>((_, reject) => child.once('error', (error) => reject(new Error(`cannot start redis-server (is it installed?): ${error.message}`))));
    const url = `redis://127.0.0.1:${port}`;
    // A fresh client per attempt: one that failed to connect keeps its own retry schedule.
    const attempt = async () => {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
      client.on('error', () => undefined);
      return client.connect().then(
        () => client,
        () => undefined,
      );
    };
    const client = await Promise.race([failed, waitFor(attempt, { timeoutMs: 10_000, what: 'redis-server' })]);
    return new PrivateRedis(url, child, client);
  }

  get pid(): number {
    return this.#child.pid ?? 0;
  }

  /** Commands served so far, the benchmark's own INFO calls left out. */
  async commands(): Promise<number> {
    const info = await this.#client.info('commandstats');
    let calls = 0;
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (match[1] !== 'info') calls += Number(match[2]);
    return calls;
  }

  async stop(): Promise<void> {
    this.#client.disconnect();
    this.#child.kill('SIGTERM');
    await new Promise((resolve) => (this.#child.exitCode === null ? this.#child.once('exit', resolve) : resolve(null)));
  }
}
