// Workers measured as machines (issue 41, point 4): each worker process held to a fixed CPU share
// (bench/turns/cpu-share.ts), 1, 2, 4 and 8 workers against one Postgres, a 200 ms model, 8 sessions
// per worker, for the reference pipeline and Herald in the same run. Reports turns/s against linear,
// Postgres CPU per turn and turns/s per Postgres core, and where scaling stops: the first point below
// 0.9x linear, with what was busiest there. Writes bench/results/scale.json.
// Run: npm run bench -- scale   (BENCH_SECONDS per point, BENCH_WORKER_CPU = each worker's cores)
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { machineLine, table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import { ReferenceBench } from './reference-pipeline/stack.ts';
import { PrivateRedis, StatementCounter } from './turns/counters.ts';
import { CpuShares } from './turns/cpu-share.ts';
import { measurePoint } from './turns/measure.ts';
import type { Meters, TurnsPoint, TurnsTarget } from './turns/measure.ts';

export const SCALE_RESULTS_FILE = new URL('./results/scale.json', import.meta.url);
const WORKER_COUNTS = [1, 2, 4, 8];
const SESSIONS_PER_WORKER = 8;
const MODEL_MS = 200;
/** Each Herald role's HERALD_DB_POOL_SIZE in this bench (reported in scale.json). */
const SCALE_POOL_SIZE = 4;

export interface ScalePoint {
  workers: number;
  turns_per_s: number;
  ideal_turns_per_s: number;
  vs_linear: number;
  overhead_p50_ms: number;
  client_p99_ms: number;
  cpu_ms_per_turn: TurnsPoint['cpu_ms_per_turn'];
  sql_per_turn: number;
  /** Postgres CPU in use during the point, in cores. */
  postgres_cores: number;
  /** What one core of Postgres serves at this point's cost per turn. */
  turns_per_s_per_postgres_core: number;
  /** Times a worker's group waited for its quota during the point (the share bound it). */
  worker_throttled: number;
}

type Target = TurnsTarget & { start(): Promise<void>; stop(): Promise<void> };
const round = (n: number, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : 0);

async function scalePoint(target: Target, meters: Meters, shares: CpuShares, workers: number, seconds: number, oneWorker: number | undefined): Promise<ScalePoint> {
  const scenario = { workers, concurrency: SESSIONS_PER_WORKER, clients: SESSIONS_PER_WORKER * workers, modelLatencyMs: MODEL_MS, durationMs: seconds * 1000 };
  // The first short run starts the workers; each new one then gets its own group before measuring.
  await target.run({ ...scenario, durationMs: 500 }, `scale${workers}-start`);
  for (const pid of target.pids.workers) await shares.hold(pid);
  const throttledBefore = await shares.throttledCount();
  const { point } = await measurePoint(target, meters, scenario, `scale${workers}`);
  const base = oneWorker ?? point.turns_per_s;
  const postgresMs = point.cpu_ms_per_turn.postgres;
  return {
    workers,
    turns_per_s: point.turns_per_s,
    ideal_turns_per_s: round(base * workers, 1),
    vs_linear: round(point.turns_per_s / (base * workers)),
    overhead_p50_ms: point.overhead_p50_ms,
    client_p99_ms: point.client_p99_ms,
    cpu_ms_per_turn: point.cpu_ms_per_turn,
    sql_per_turn: point.sql_per_turn,
    postgres_cores: round((postgresMs * point.turns_per_s) / 1000),
    turns_per_s_per_postgres_core: round(postgresMs > 0 ? 1000 / postgresMs : 0, 0),
    worker_throttled: (await shares.throttledCount()) - throttledBefore,
  };
}

async function runTarget(name: string, target: Target, meters: Meters, cores: number, seconds: number, progress: (m: string) => void): Promise<{ points: ScalePoint[]; method: string }> {
  const shares = await CpuShares.open(cores);
  await target.start();
  const points: ScalePoint[] = [];
  try {
    for (const workers of WORKER_COUNTS) {
      progress(`${name}: ${workers} worker(s) held to ${cores} core each (${shares.method}), ${SESSIONS_PER_WORKER * workers} sessions, model ${MODEL_MS} ms`);
      points.push(await scalePoint(target, meters, shares, workers, seconds, points[0]?.turns_per_s));
    }
  } finally {
    await target.stop();
    await shares.close();
  }
  return { points, method: shares.method };
}

/** Where scaling stops: the first point under 0.9x linear, or none within the counts run. */
export function saturation(points: ScalePoint[]): { workers: number | null; postgres_cores: number | null; note: string } {
  const first = points.find((p) => p.vs_linear < 0.9);
  if (!first) return { workers: null, postgres_cores: null, note: `at least 0.9x linear up to ${points.at(-1)?.workers ?? 0} workers` };
  return { workers: first.workers, postgres_cores: first.postgres_cores, note: `below 0.9x linear from ${first.workers} workers, Postgres using ${first.postgres_cores} cores there` };
}

export interface ScaleResult {
  method: string;
  worker_cpu_cores: number;
  /** HERALD_DB_POOL_SIZE of the Herald roles. */
  db_pool_size: number;
  reference: ScalePoint[];
  herald: ScalePoint[];
}

export async function runScaleBench(progress: (message: string) => void, seconds: number): Promise<ScaleResult> {
  const cores = Number(process.env.BENCH_WORKER_CPU ?? 0.25);
  const redis = await PrivateRedis.start();
  const counter = await StatementCounter.create();
  const meters = { redis, counter };
  const env = { REDIS_URL: redis.url, ...counter.env };
  try {
    const reference = await runTarget('reference', new ReferenceBench(env), meters, cores, seconds, progress);
    // Eight workers at the default pool of 10 (plus each one's listeners) pass Postgres' default
    // max_connections of 100; a worker held to a quarter core never keeps more than a few busy.
    const herald = await runTarget('herald', new PipelineBench({ env: { ...env, HERALD_DB_POOL_SIZE: String(SCALE_POOL_SIZE) } }), meters, cores, seconds, progress);
    return { method: herald.method, worker_cpu_cores: cores, db_pool_size: SCALE_POOL_SIZE, reference: reference.points, herald: herald.points };
  } finally {
    await counter.close();
    await redis.stop();
  }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

export function printScaleBench(result: ScaleResult): void {
  const rows = (name: string, points: ScalePoint[]) =>
    points.map((p) => [
      name,
      p.workers,
      fmt(p.turns_per_s),
      fmt(p.ideal_turns_per_s),
      `${fmt(p.vs_linear, 2)}x`,
      fmt(p.overhead_p50_ms),
      fmt(p.cpu_ms_per_turn.worker, 2),
      fmt(p.cpu_ms_per_turn.postgres, 2),
      fmt(p.cpu_ms_per_turn.total, 2),
      fmt(p.postgres_cores, 2),
      fmt(p.turns_per_s_per_postgres_core, 0),
      p.worker_throttled,
    ]);
  console.log(`\n## Workers as machines: each held to ${result.worker_cpu_cores} core (${result.method}), ${MODEL_MS} ms model, ${SESSIONS_PER_WORKER} sessions per worker\n`);
  console.log(
    table(
      ['pipeline', 'workers', 'turns/s', 'ideal', 'vs linear', 'overhead p50 ms', 'CPU ms/turn worker', 'postgres', 'total', 'Postgres cores', 'turns/s per Postgres core', 'worker throttled'],
      [...rows('reference', result.reference), ...rows('herald', result.herald)],
    ),
  );
  console.log(`\nreference: ${saturation(result.reference).note}; herald: ${saturation(result.herald).note}.`);
}

export async function writeScaleJson(result: ScaleResult): Promise<void> {
  const json = {
    machine: machineLine(),
    date: new Date().toISOString(),
    load_average: loadavg().map((n) => Number(n.toFixed(2))),
    model_ms: MODEL_MS,
    sessions_per_worker: SESSIONS_PER_WORKER,
    ...result,
    saturation: { reference: saturation(result.reference), herald: saturation(result.herald) },
  };
  await mkdir(new URL('./', SCALE_RESULTS_FILE), { recursive: true });
  await writeFile(SCALE_RESULTS_FILE, `${JSON.stringify(json, null, 2)}\n`);
}
