import pg from 'pg';
import { ADMIN_URL } from '../../test/support/test-database.ts';
import { withDefaultUser } from '@herald/db';
import type { Scenario, ScenarioResult } from './drive.ts';
import type { PrivateRedis, StatementCounter } from './counters.ts';
import { cpuMs, rssMb, treeCpuMs } from './proc.ts';

/** A pipeline the turns benchmark drives: Herald's (PipelineBench) or the reference. */
export interface TurnsTarget {
  run(scenario: Scenario, label: string): Promise<ScenarioResult>;
  readonly pids: { ingress: number; workers: number[] };
  readonly databaseName: string;
}

/** One point of bench/results/turns.json, in the shape issue 18 names. */
export interface TurnsPoint {
  workers: number;
  clients: number;
  model_ms: number;
  turns: number;
  turns_per_s: number;
  client_p50_ms: number;
  client_p99_ms: number;
  overhead_p50_ms: number;
  overhead_p99_ms: number;
  cpu_ms_per_turn: { ingress: number; worker: number; postgres: number; redis: number; total: number };
  sql_per_turn: number;
  redis_per_turn: number;
  rss_mb: { ingress: number; worker: number };
}

/** What the markdown table shows besides the JSON point. */
export interface MeasuredPoint {
  point: TurnsPoint;
  /** The load driver: the clients and the fake model, in the benchmark's own process. */
  driverCpuMsPerTurn: number;
}

interface Snapshot {
  ingress: number;
  worker: number;
  postgres: Map<number, number>;
  redis: number;
  driver: number;
  statements: number;
  commands: number;
}

export interface Meters {
  redis: PrivateRedis;
  counter: StatementCounter;
}

/** The Postgres backends serving the target's database (the pools of its role processes). */
async function backendPids(database: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: withDefaultUser(ADMIN_URL) });
  await client.connect();
  try {
    const result = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    return result.rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

async function snapshot(target: TurnsTarget, meters: Meters): Promise<Snapshot> {
  const { ingress, workers } = target.pids;
  const roles = await treeCpuMs([ingress, ...workers]);
  const postgres = await cpuMs(await backendPids(target.databaseName));
  const redis = (await cpuMs([meters.redis.pid])).get(meters.redis.pid) ?? 0;
  const usage = process.cpuUsage();
  return {
    ingress: roles.get(ingress) ?? 0,
    worker: workers.reduce((sum, pid) => sum + (roles.get(pid) ?? 0), 0),
    postgres,
    redis,
    driver: (usage.user + usage.system) / 1000,
    statements: await meters.counter.total([ingress, ...workers]),
    commands: await meters.redis.commands(),
  };
}

/** Backends present at both ends count their difference; one that connected meanwhile, all of its CPU. */
function postgresDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

const round = (n: number, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : 0);

/**
 * Runs a point after a one-second warm-up (JIT, pools, freshly started workers), with /proc CPU,
 * statements and Redis commands read just before and just after the measured run.
 */
export async function measurePoint(target: TurnsTarget, meters: Meters, scenario: Scenario, label: string): Promise<MeasuredPoint> {
  await target.run({ ...scenario, durationMs: 1000 }, `${label}-warm`);
  const before = await snapshot(target, meters);
  const result = await target.run(scenario, label);
  const after = await snapshot(target, meters);
  const turns = Math.max(1, result.turns);
  const per = (value: number) => round(value / turns);
  const cpu = {
    ingress: per(after.ingress - before.ingress),
    worker: per(after.worker - before.worker),
    postgres: per(postgresDelta(before.postgres, after.postgres)),
    redis: per(after.redis - before.redis),
    total: 0,
  };
  cpu.total = round(cpu.ingress + cpu.worker + cpu.postgres + cpu.redis);
  const rss = await Promise.all(target.pids.workers.map(rssMb));
  // Every turn commits in Postgres: none counted means the counter patched another pg than the
  // roles use (a bundled copy), and the SQL column would read 0 without saying so.
  if (result.turns > 0 && after.statements === before.statements) throw new Error('no SQL statement counted in the role processes: is pg loaded from node_modules?');
  return {
    point: {
      workers: scenario.workers,
      clients: scenario.clients,
      model_ms: scenario.modelLatencyMs,
      turns: result.turns,
      turns_per_s: round(result.turnsPerSecond, 1),
      client_p50_ms: round(result.latencyP50),
      client_p99_ms: round(result.latencyP99),
      overhead_p50_ms: round(result.overheadP50),
      overhead_p99_ms: round(result.overheadP99),
      cpu_ms_per_turn: cpu,
      // The benchmark's own snapshot queries are not the pipeline's: counted only in the processes.
      sql_per_turn: per(after.statements - before.statements),
      redis_per_turn: per(after.commands - before.commands),
      rss_mb: { ingress: round(await rssMb(target.pids.ingress), 0), worker: round(Math.max(0, ...rss), 0) },
    },
    driverCpuMsPerTurn: per(after.driver - before.driver),
  };
}
