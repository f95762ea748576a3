import { sql } from 'kysely';
import { echoHandler, startFakeOpenAI } from '../test/support/fake-llm.ts';
import type { FakeLLM } from '../test/support/fake-llm.ts';
import { createTestDatabase, uniquePrefix } from '../test/support/test-database.ts';
import type { TestDatabase } from '../test/support/test-database.ts';
import { HERALD_BUILT_BIN, PROCESS_START_MS, spawnHerald, TEST_TOKEN, waitFor } from '../test/support/stack.ts';
import type { HeraldProcess } from '../test/support/stack.ts';
import { driveClients, scenarioResult, serviceTimes, toolStepsHandler, turnServiceMs } from './turns/drive.ts';
import type { Scenario, ScenarioResult } from './turns/drive.ts';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, silentLogger } from '@herald/core';
import { createDb } from '@herald/db';
import { prepareDatabase, startEmbeddedPostgres } from '@herald/cli';

export interface PipelineOptions {
  /** HERALD_QUEUE of the role processes; Redis unless said. */
  queue?: 'redis' | 'postgres';
  /** Run on an embedded Postgres (its own cluster in a temporary directory) instead of the local one. */
  embedded?: boolean;
  /** More environment for every role process (the turns benchmark's Redis and statement counter). */
  env?: Record<string, string>;
  /** Node options of the role processes that NODE_OPTIONS may not carry (--cpu-prof). */
  nodeArgs?: string[];
}

/** A fresh embedded cluster, migrated as `herald up` would, removed again by drop(). */
async function embeddedDatabase(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'herald-bench-embedded-'));
  // As root the server runs as an unprivileged user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  const embedded = await startEmbeddedPostgres(dir, silentLogger);
  await prepareDatabase(loadConfig({ DATABASE_URL: embedded.url }), silentLogger);
  const db = createDb({ url: embedded.url, maxConnections: 3 });
  return {
    url: embedded.url,
    name: 'herald',
    db,
    async drop() {
      await db.destroy();
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type { Scenario, ScenarioResult } from './turns/drive.ts';

/** True once the role said `line`; throws with its output if it exited first (fail fast, say why). */
function started(role: HeraldProcess, line: string): boolean {
  if (role.output().includes(line)) return true;
  if (role.child.exitCode !== null || role.child.signalCode !== null) throw new Error(`role exited before "${line}": ${role.output().slice(-2000)}`);
  return false;
}

/**
 * A real deployment in miniature: one `herald ingress` process and N `herald worker` processes on
 * a fresh database, driven by clients that each own a session and send the next message when the
 * previous one is answered (`?wait`). The fake model answers after `modelLatencyMs`.
 */
export class PipelineBench {
  #fake!: FakeLLM;
  #database!: TestDatabase;
  #env!: Record<string, string>;
  #ingress!: HeraldProcess;
  #workers: HeraldProcess[] = [];
  #concurrency = 0;
  #url!: string;
  readonly #options: PipelineOptions;
  /** Spawn to ready (the role's start line), per role process started. */
  readonly readyMs: { role: 'ingress' | 'worker'; ms: number }[] = [];

  constructor(options: PipelineOptions = {}) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#fake = await startFakeOpenAI();
    this.#database = this.#options.embedded ? await embeddedDatabase() : await createTestDatabase();
    const port = String(20000 + Math.floor(Math.random() * 20000));
    this.#url = `http://127.0.0.1:${port}`;
    this.#env = {
      DATABASE_URL: this.#database.url,
      PORT: port,
      HERALD_API_TOKEN: TEST_TOKEN,
      HERALD_QUEUE_PREFIX: uniquePrefix(),
      HERALD_MODEL: 'openai/bench',
      OPENAI_BASE_URL: this.#fake.url,
      OPENAI_API_KEY: 'sk-bench',
      HERALD_WORKER_CONCURRENCY: '64',
      HERALD_DB_POOL_SIZE: '16',
      HERALD_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      HERALD_QUEUE: this.#options.queue ?? 'redis',
      ...this.#options.env,
    };
    // The compiled roles, as production runs them (`npm run bench` builds first).
    const spawned = performance.now();
    this.#ingress = spawnHerald('ingress', this.#env, HERALD_BUILT_BIN, this.#options.nodeArgs);
    await this.#untilStarted(this.#ingress, 'ingress listening', 'ingress');
    this.readyMs.push({ role: 'ingress', ms: performance.now() - spawned });
  }

  /**
   * A role process may take long to start on a busy machine (the modes run failed at 30 s under
   * load): wait as long as the tests do, and a process that exits meanwhile fails at once with
   * its output instead of after the whole wait. Polled every 10 ms so readyMs stays accurate.
   */
  async #untilStarted(role: HeraldProcess, line: string, what: string): Promise<void> {
    const ready = waitFor(async () => started(role, line), { timeoutMs: PROCESS_START_MS, what, intervalMs: 10 });
    const exited = role.exited.then((code) => {
      throw new Error(`${what} exited (${code}) before starting:\n${role.output().slice(-2000)}`);
    });
    try {
      await Promise.race([ready, exited]);
    } finally {
      exited.catch(() => undefined);
      ready.catch(() => undefined);
    }
  }

  async #scaleWorkers(count: number, concurrency = this.#concurrency): Promise<void> {
    if (concurrency !== this.#concurrency) {
      this.#concurrency = concurrency;
      await this.#scaleWorkers(0);
    }
    while (this.#workers.length > count) {
      const worker = this.#workers.pop();
      worker?.child.kill('SIGTERM');
      await worker?.exited;
    }
    while (this.#workers.length < count) {
      const spawned = performance.now();
      const worker = spawnHerald('worker', { ...this.#env, HERALD_WORKER_CONCURRENCY: String(this.#concurrency) }, HERALD_BUILT_BIN, this.#options.nodeArgs);
      this.#workers.push(worker);
      await this.#untilStarted(worker, 'worker started', 'worker');
      this.readyMs.push({ role: 'worker', ms: performance.now() - spawned });
    }
  }

  async run(scenario: Scenario, label: string): Promise<ScenarioResult> {
    await this.#scaleWorkers(scenario.workers, scenario.concurrency);
    this.#fake.latencyMs = scenario.modelLatencyMs;
    this.#fake.handler = (scenario.steps ?? 1) > 1 ? toolStepsHandler(scenario.steps ?? 1) : echoHandler;
    const before = this.#fake.requests.length;
    const runId = `${label}-${Date.now()}`;
    const since = new Date();
    const drive = await driveClients(this.#url, TEST_TOKEN, scenario, runId);
    const serviceBySession = serviceTimes(this.#fake.requests.slice(before));
    const rows = await sql<{ session_id: string; total_ms: number; lease_ms: number }>`
      SELECT e.session_id,
             extract(epoch FROM (e.completed_at - e.received_at)) * 1000 AS total_ms,
             extract(epoch FROM (t.started_at - e.received_at)) * 1000 AS lease_ms
      FROM inbound_events e
      JOIN sessions s ON s.id = e.session_id
      JOIN turns t ON t.id = e.turn_id
      WHERE s.chat_id LIKE ${`${scenario.chatPrefix ?? runId}-%`} AND e.status = 'done' AND e.received_at >= ${since}
      ORDER BY e.session_id, e.received_at`.execute(this.#database.db);
    const overheads: number[] = [];
    const seen = new Map<string, number>();
    for (const row of rows.rows) {
      const i = seen.get(row.session_id) ?? 0;
      seen.set(row.session_id, i + 1);
      const service = turnServiceMs(serviceBySession.get(row.session_id), i, scenario.steps);
      overheads.push(Number(row.total_ms) - service);
    }
    const leaseMs = rows.rows.map((row) => Number(row.lease_ms));
    return scenarioResult(scenario, drive, overheads, leaseMs);
  }

  async workerRssMb(): Promise<number[]> {
    const { readFile } = await import('node:fs/promises');
    return Promise.all(
      this.#workers.map(async (worker) => {
        const status = await readFile(`/proc/${worker.child.pid}/status`, 'utf8').catch(() => '');
        const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
        return kb / 1024;
      }),
    );
  }

  get databaseName(): string {
    return this.#database.name;
  }

  get databaseUrl(): string {
    return this.#database.url;
  }

  /** The role processes' pids: the ingress, then each worker. */
  get pids(): { ingress: number; workers: number[] } {
    return { ingress: this.#ingress.child.pid ?? 0, workers: this.#workers.map((worker) => worker.child.pid ?? 0) };
  }

  async stop(): Promise<void> {
    await this.#scaleWorkers(0);
    this.#ingress.child.kill('SIGTERM');
    await this.#ingress.exited;
    await this.#fake.close();
    await this.#database.drop();
  }
}
