// Herald as built in another checkout against Herald as built here, with the reference pipeline,
// in one run: the points interleave (reference, before, after; then again, BENCH_ROUNDS times) so
// that a machine whose speed drifts between runs (this VM's did by 2x within minutes) weighs on all
// three alike, and each figure is the median of its rounds. Every point is a process of its own
// (bench/turn-point.ts, copied into the other checkout) on a fresh database migrated by that
// checkout's own code. Writes bench/results/compare.json.
// Run: npm run build (here and in the other checkout), then npx tsx bench/run.ts compare --before DIR
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, table } from './machine.ts';
import type { TurnsPoint } from './turns/measure.ts';

export const COMPARE_RESULTS_FILE = new URL('./results/compare.json', import.meta.url);
const HERE = fileURLToPath(new URL('..', import.meta.url));
const POINT_SCRIPT = fileURLToPath(new URL('./turn-point.ts', import.meta.url));
const POINTS = [
  { workers: 1, clients: 1 },
  { workers: 1, clients: 32 },
];

type Measured = TurnsPoint & { driver_cpu_ms_per_turn: number };
type Target = 'reference' | 'before' | 'after';

function runPoint(dir: string, which: 'herald' | 'reference', scenario: object): Measured {
  const result = spawnSync('npx', ['tsx', 'bench/turn-point.ts', which, JSON.stringify(scenario)], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const line = result.stdout
    .trim()
    .split('\n')
    .findLast((text) => text.startsWith('{'));
  if (result.status !== 0 || line === undefined) throw new Error(`point in ${dir} failed (${result.status}): ${result.stderr.slice(-2000)}`);
  return JSON.parse(line) as Measured;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? Number.NaN;

function summary(points: Measured[]) {
  return {
    turns_per_s: median(points.map((p) => p.turns_per_s)),
    overhead_p50_ms: median(points.map((p) => p.overhead_p50_ms)),
    overhead_p99_ms: median(points.map((p) => p.overhead_p99_ms)),
    cpu_ms_per_turn: median(points.map((p) => p.cpu_ms_per_turn.total)),
    postgres_cpu_ms_per_turn: median(points.map((p) => p.cpu_ms_per_turn.postgres)),
    sql_per_turn: median(points.map((p) => p.sql_per_turn)),
    rounds: points.map((p) => ({ turns_per_s: p.turns_per_s, overhead_p50_ms: p.overhead_p50_ms, cpu_ms_per_turn: p.cpu_ms_per_turn.total })),
  };
}

export interface CompareResult {
  before: string;
  after: string;
  rounds: number;
  points: { workers: number; clients: number; reference: ReturnType<typeof summary>; before: ReturnType<typeof summary>; after: ReturnType<typeof summary> }[];
}

export function runCompare(beforeDir: string, rounds: number, seconds: number, progress: (message: string) => void): CompareResult {
  copyFileSync(POINT_SCRIPT, join(beforeDir, 'bench', 'turn-point.ts'));
  const commit = (dir: string) => spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' }).stdout.trim();
  const points = POINTS.map(({ workers, clients }) => {
    const scenario = { workers, clients, concurrency: 64, modelLatencyMs: 0, durationMs: seconds * 1000 };
    const seen: Record<Target, Measured[]> = { reference: [], before: [], after: [] };
    for (let round = 1; round <= rounds; round++) {
      progress(`${workers} worker(s), ${clients} client(s): round ${round} of ${rounds}`);
      seen.reference.push(runPoint(HERE, 'reference', scenario));
      seen.before.push(runPoint(beforeDir, 'herald', scenario));
      seen.after.push(runPoint(HERE, 'herald', scenario));
    }
    return { workers, clients, reference: summary(seen.reference), before: summary(seen.before), after: summary(seen.after) };
  });
  return { before: commit(beforeDir), after: commit(HERE), rounds, points };
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

export function printCompare(result: CompareResult): void {
  console.log(`\n## Herald ${result.before} against ${result.after}, interleaved with the reference, median of ${result.rounds} rounds\n`);
  const rows = result.points.flatMap((p) =>
    (['reference', 'before', 'after'] as const).map((name) => {
      const s = p[name];
      const label = name === 'reference' ? 'reference' : `herald ${name === 'before' ? result.before : result.after}`;
      return [
        label,
        p.workers,
        p.clients,
        fmt(s.turns_per_s),
        `${fmt(s.turns_per_s / p.reference.turns_per_s, 2)}x`,
        fmt(s.overhead_p50_ms),
        fmt(s.overhead_p99_ms),
        fmt(s.cpu_ms_per_turn, 2),
        fmt(s.postgres_cpu_ms_per_turn, 2),
        fmt(s.sql_per_turn),
      ];
    }),
  );
  console.log(table(['pipeline', 'workers', 'clients', 'turns/s', 'vs reference', 'overhead p50 ms', 'overhead p99 ms', 'CPU ms/turn (all)', 'postgres', 'SQL/turn'], rows));
}

export async function writeCompareJson(result: CompareResult): Promise<void> {
  await mkdir(new URL('./', COMPARE_RESULTS_FILE), { recursive: true });
  const json = { machine: machineLine(), date: new Date().toISOString(), load_average: loadavg().map((n) => Number(n.toFixed(2))), ...result };
  await writeFile(COMPARE_RESULTS_FILE, `${JSON.stringify(json, null, 2)}\n`);
}
