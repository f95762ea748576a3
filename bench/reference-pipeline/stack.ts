import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { echoHandler, startFakeOpenAI } from '../../test/support/fake-llm.ts';
import type { FakeLLM } from '../../test/support/fake-llm.ts';
import { createTestDatabase, uniquePrefix } from '../../test/support/test-database.ts';
import type { TestDatabase } from '../../test/support/test-database.ts';
import { waitFor } from '../../test/support/wait.ts';
import { driveClients, scenarioResult, serviceTimes, toolStepsHandler, turnServiceMs } from '../turns/drive.ts';
import type { Scenario, ScenarioResult } from '../turns/drive.ts';
import { withDefaultUser } from '@herald/db';
import { createReferenceSchema } from './schema.ts';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

interface RoleProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}

/**
 * The reference pipeline's roles run through tsx (Node 20 has no type stripping): tsx costs
 * memory and start time, not CPU per turn once the modules are loaded.
 */
function spawnRole(file: string, env: Record<string, string>): RoleProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', here(file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, output: () => output, exited };
}

async function untilSaid(role: RoleProcess, line: string): Promise<void> {
  await waitFor(
    async () => {
      if (role.child.exitCode !== null) throw new Error(`reference role exited: ${role.output().slice(-2000)}`);
      return role.output().includes(line);
    },
    { timeoutMs: 60_000, what: line },
  );
}

/**
 * The bare reference pipeline (ingress.ts, worker.ts) on its own database and fake model, driven
 * like Herald's: the same clients, the same fake model, the same Postgres and Redis.
 */
export class ReferenceBench {
  #fake!: FakeLLM;
  #database!: TestDatabase;
  #env!: Record<string, string>;
  #ingress!: RoleProcess;
  #workers: RoleProcess[] = [];
  #concurrency = 0;
  #url!: string;
  readonly #extraEnv: Record<string, string>;

  constructor(env: Record<string, string>) {
    this.#extraEnv = env;
  }

  async start(): Promise<void> {
    this.#fake = await startFakeOpenAI();
    this.#database = await createTestDatabase();
    // The roles are plain node-postgres: the user name goes into the URL, as Herald's pools add it.
    const url = withDefaultUser(this.#database.url);
    await createReferenceSchema(url);
    const port = String(20000 + Math.floor(Math.random() * 20000));
    this.#url = `http://127.0.0.1:${port}`;
    this.#env = { DATABASE_URL: url, PORT: port, QUEUE_PREFIX: uniquePrefix(), OPENAI_BASE_URL: this.#fake.url, ...this.#extraEnv };
    this.#ingress = spawnRole('./ingress.ts', this.#env);
    await untilSaid(this.#ingress, 'reference ingress listening');
  }

  async #scaleWorkers(count: number, concurrency: number): Promise<void> {
    if (concurrency !== this.#concurrency) {
      this.#concurrency = concurrency;
      await this.#scaleWorkers(0, concurrency);
    }
    while (this.#workers.length > count) {
      const worker = this.#workers.pop();
      worker?.child.kill('SIGTERM');
      await worker?.exited;
    }
    while (this.#workers.length < count) {
      const worker = spawnRole('./worker.ts', { ...this.#env, WORKER_CONCURRENCY: String(concurrency) });
      this.#workers.push(worker);
      await untilSaid(worker, 'reference worker started');
    }
  }

  async run(scenario: Scenario, label: string): Promise<ScenarioResult> {
    await this.#scaleWorkers(scenario.workers, scenario.concurrency);
    this.#fake.latencyMs = scenario.modelLatencyMs;
    this.#fake.handler = (scenario.steps ?? 1) > 1 ? toolStepsHandler(scenario.steps ?? 1) : echoHandler;
    const before = this.#fake.requests.length;
    const runId = `${label}-${Date.now()}`;
    const drive = await driveClients(this.#url, 'none', scenario, runId);
    const service = serviceTimes(this.#fake.requests.slice(before));
    const rows = await sql<{ id: string; total_ms: number }>`
      SELECT id, extract(epoch FROM (completed_at - received_at)) * 1000 AS total_ms
      FROM ref_inbound WHERE chat_id LIKE ${`${runId}-%`} AND status = 'done'`.execute(this.#database.db);
    const overheads = rows.rows.map((row) => Number(row.total_ms) - turnServiceMs(service.get(`ref-${row.id}`), 0, scenario.steps));
    return scenarioResult(scenario, drive, overheads);
  }

  get databaseName(): string {
    return this.#database.name;
  }

  get pids(): { ingress: number; workers: number[] } {
    return { ingress: this.#ingress.child.pid ?? 0, workers: this.#workers.map((worker) => worker.child.pid ?? 0) };
  }

  async stop(): Promise<void> {
    await this.#scaleWorkers(0, this.#concurrency);
    this.#ingress.child.kill('SIGTERM');
    await this.#ingress.exited;
    await this.#fake.close();
    await this.#database.drop();
  }
}
