import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { machineLine, table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import { ReferenceBench } from './reference-pipeline/stack.ts';
import { PrivateRedis, StatementCounter } from './turns/counters.ts';
import { measurePoint } from './turns/measure.ts';
import type { Meters, MeasuredPoint, TurnsTarget } from './turns/measure.ts';
import type { Scenario } from './turns/drive.ts';

export const TURNS_RESULTS_FILE = new URL('./results/turns.json', import.meta.url);
export const TURNS_TABLE_FILE = new URL('./results/turns.md', import.meta.url);

/** The points of issue 18: an instant model at 1 and 32 clients on 1 and 2 workers, then a 200 ms model with 8 sessions per worker on 1, 2 and 4. */
export function turnsScenarios(seconds: number): { label: string; scenario: Scenario }[] {
  const durationMs = seconds * 1000;
  const instant = [1, 2].flatMap((workers) => [1, 32].map((clients) => ({ label: `z${workers}-${clients}`, scenario: { workers, concurrency: 64, clients, modelLatencyMs: 0, durationMs } })));
  const scaling = [1, 2, 4].map((workers) => ({ label: `s${workers}`, scenario: { workers, concurrency: 8, clients: 64, modelLatencyMs: 200, durationMs } }));
  return [...instant, ...scaling];
}

export interface TurnsBenchResult {
  reference: MeasuredPoint[];
  herald: MeasuredPoint[];
  readyMs: { role: string; ms: number }[];
}

async function runPoints(
  name: string,
  target: TurnsTarget & { start(): Promise<void>; stop(): Promise<void> },
  meters: Meters,
  seconds: number,
  progress: (message: string) => void,
): Promise<MeasuredPoint[]> {
  progress(`${name}: starting`);
  await target.start();
  const points: MeasuredPoint[] = [];
  try {
    for (const { label, scenario } of turnsScenarios(seconds)) {
      progress(`${name}: ${scenario.workers} worker(s) x ${scenario.concurrency} sessions, ${scenario.clients} client(s), model ${scenario.modelLatencyMs} ms`);
      points.push(await measurePoint(target, meters, scenario, label));
    }
  } finally {
    await target.stop();
  }
  return points;
}

/**
 * The reference pipeline, then Herald, on one private Redis and the shared Postgres, every role
 * process counting its SQL statements. Fails (throws) on the first unanswered turn.
 */
export async function runTurnsBench(progress: (message: string) => void, seconds: number): Promise<TurnsBenchResult> {
  const redis = await PrivateRedis.start();
  const counter = await StatementCounter.create();
  const meters = { redis, counter };
  const env = { REDIS_URL: redis.url, ...counter.env };
  try {
    const reference = await runPoints('reference', new ReferenceBench(env), meters, seconds, progress);
    const herald = new PipelineBench({ env });
    const heraldPoints = await runPoints('herald', herald, meters, seconds, progress);
    return { reference, herald: heraldPoints, readyMs: herald.readyMs };
  } finally {
    await counter.close();
    await redis.stop();
  }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The markdown of sections 1 and 2 of docs/benchmarks.md, from one run. */
export function turnsMarkdown(result: TurnsBenchResult): string {
  const instant = (points: MeasuredPoint[]) => points.filter((p) => p.point.model_ms === 0);
  const refOf = (p: MeasuredPoint) => result.reference.find((r) => r.point.workers === p.point.workers && r.point.clients === p.point.clients && r.point.model_ms === p.point.model_ms);
  const rows = (name: string, points: MeasuredPoint[]) =>
    points.map((m) => {
      const p = m.point;
      const c = p.cpu_ms_per_turn;
      const ref = refOf(m);
      return [
        name,
        p.workers,
        p.clients,
        p.model_ms,
        p.turns,
        fmt(p.turns_per_s),
        ref ? `${fmt(p.turns_per_s / ref.point.turns_per_s, 2)}x` : '',
        fmt(p.client_p50_ms),
        fmt(p.client_p99_ms),
        fmt(p.overhead_p50_ms),
        fmt(p.overhead_p99_ms),
        fmt(c.ingress, 2),
        fmt(c.worker, 2),
        fmt(c.postgres, 2),
        fmt(c.redis, 2),
        fmt(c.total, 2),
        fmt(m.driverCpuMsPerTurn, 2),
        fmt(p.sql_per_turn),
        fmt(p.redis_per_turn),
        fmt(p.rss_mb.ingress, 0),
        fmt(p.rss_mb.worker, 0),
      ];
    });
  const headers = [
    'pipeline',
    'workers',
    'clients',
    'model ms',
    'turns',
    'turns/s',
    'vs reference',
    'client p50 ms',
    'client p99 ms',
    'overhead p50 ms',
    'overhead p99 ms',
    'CPU ms/turn ingress',
    'worker',
    'postgres',
    'redis',
    'total',
    'driver',
    'SQL/turn',
    'Redis cmds/turn',
    'RSS MB ingress',
    'worker (max)',
  ];
  const scaling = (name: string, points: MeasuredPoint[]) => {
    const slow = points.filter((p) => p.point.model_ms > 0);
    const one = slow.find((p) => p.point.workers === 1)?.point.turns_per_s ?? Number.NaN;
    return slow.map((m) => [
      name,
      m.point.workers,
      fmt(m.point.turns_per_s),
      fmt((m.point.workers * 8 * 1000) / m.point.model_ms),
      `${fmt(m.point.turns_per_s / (one * m.point.workers), 2)}x`,
      fmt(m.point.client_p50_ms),
      fmt(m.point.client_p99_ms),
    ]);
  };
  const ready = result.readyMs.map((r) => `${r.role} ${fmt(r.ms, 0)} ms`).join(', ');
  return [
    '## 1. Turns per second, overhead and CPU per turn against the bare reference pipeline\n',
    "Same run, same machine: the reference pipeline (bench/reference-pipeline: fastify, commit the message, BullMQ job, worker commits the reply, Redis notice, answer) and Herald's compiled roles, driven by the same closed-loop clients against the same fake model. " +
      "Overhead = message committed to reply committed, minus the fake model's service time. CPU from /proc per process: ingress and workers with their children, the Postgres backends of the point's database, a redis-server of the benchmark's own; total = those four; driver = the benchmark process (clients and fake model), not in total. " +
      'SQL/turn: statements the role processes sent (node-postgres query calls, each one round trip); Redis cmds/turn: INFO commandstats of the private Redis. Each point follows a 1 s warm-up.\n',
    table(headers, [...rows('reference', instant(result.reference)), ...rows('herald', instant(result.herald))]),
    '\n## 2. Horizontal scaling with a 200 ms model, 8 sessions per worker, 64 clients\n',
    table(['pipeline', 'workers', 'turns/s', 'ideal turns/s', 'vs linear', 'client p50 ms', 'p99 ms'], [...scaling('reference', result.reference), ...scaling('herald', result.herald)]),
    '\nCPU, round trips and RSS of the scaling points:\n',
    table(headers, [
      ...rows(
        'reference',
        result.reference.filter((p) => p.point.model_ms > 0),
      ),
      ...rows(
        'herald',
        result.herald.filter((p) => p.point.model_ms > 0),
      ),
    ]),
    `\nHerald roles, spawn to ready: ${ready} (target <= 1000 ms).`,
  ].join('\n');
}

/** bench/results/turns.json (issue 18's shape) and the same figures as markdown beside it. */
export async function writeTurnsResults(result: TurnsBenchResult, markdown: string): Promise<void> {
  // The realistic and long-session sections (turn-shapes-bench.ts) carry their own dates: a turns run keeps them.
  const earlier = JSON.parse(await readFile(TURNS_RESULTS_FILE, 'utf8').catch(() => '{}')) as Record<string, unknown>;
  const json = {
    ...earlier,
    machine: machineLine(),
    date: new Date().toISOString(),
    load_average: loadavg().map((n) => Number(n.toFixed(2))),
    reference: result.reference.map((m) => m.point),
    herald: result.herald.map((m) => m.point),
  };
  await mkdir(new URL('./', TURNS_RESULTS_FILE), { recursive: true });
  await writeFile(TURNS_RESULTS_FILE, `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(TURNS_TABLE_FILE, `# Turns: Herald against the reference pipeline\n\n${json.machine}, load average ${json.load_average.join(' ')}\n\n${markdown}\n`);
}
