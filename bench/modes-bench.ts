import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import type { PipelineOptions, ScenarioResult } from './pipeline-bench.ts';

export interface ModeResult extends ScenarioResult {
  mode: string;
  database: 'external' | 'embedded';
  queue: 'redis' | 'postgres';
}

const MODES: ReadonlyArray<{ mode: string; database: ModeResult['database']; queue: ModeResult['queue']; options: PipelineOptions }> = [
  { mode: 'external Postgres, queue on Redis', database: 'external', queue: 'redis', options: { queue: 'redis' } },
  { mode: 'external Postgres, queue on Postgres', database: 'external', queue: 'postgres', options: { queue: 'postgres' } },
  { mode: 'embedded Postgres, queue on Postgres', database: 'embedded', queue: 'postgres', options: { queue: 'postgres', embedded: true } },
];

/**
 * The same miniature deployment (one ingress, one worker process, zero-latency model) in each
 * run mode, at 1 and 32 clients: what embedded mode and the queue on Postgres cost against Redis.
 * Progress goes to stderr with the time spent so far, since starting a mode (an embedded cluster's
 * initdb, the compiled roles) is what takes long on a busy machine.
 */
export async function runModesBench(progress: (message: string) => void, seconds: number): Promise<ModeResult[]> {
  const results: ModeResult[] = [];
  const began = performance.now();
  const say = (message: string) => progress(`run modes [${((performance.now() - began) / 1000).toFixed(0)} s]: ${message}`);
  for (const { mode, database, queue, options } of MODES) {
    const bench = new PipelineBench(options);
    say(`starting ${mode}`);
    await bench.start();
    try {
      for (const clients of [1, 32]) {
        say(`${mode}, ${clients} client(s) for ${seconds} s`);
        const result = await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: seconds * 1000 }, `m${results.length}`);
        results.push({ ...result, mode, database, queue });
      }
    } finally {
      say(`stopping ${mode}`);
      await bench.stop();
    }
  }
  say('done');
  return results;
}

export function printModesBench(results: readonly ModeResult[]): void {
  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
  console.log('\n## 1b. Run modes: embedded Postgres and the queue on Postgres beside Redis\n');
  console.log('One ingress and one worker process (concurrency 64), model answering instantly; overhead as in section 1.\n');
  console.log(
    table(
      ['mode', 'clients', 'turns', 'turns/s', 'client latency p50 ms', 'overhead p50 ms', 'overhead p99 ms'],
      results.map((r) => [r.mode, r.clients, r.turns, fmt(r.turnsPerSecond), fmt(r.latencyP50), fmt(r.overheadP50), fmt(r.overheadP99)]),
    ),
  );
}

export const MODES_RESULTS_FILE = new URL('./results/modes.json', import.meta.url);

const round = (n: number, digits = 1) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

/**
 * bench/results/modes.json: one row per mode and client count, with the machine and its load
 * average when the run ended (the figures are only comparable between runs on a quiet machine).
 */
export async function writeModesJson(results: readonly ModeResult[], machine: string, seconds: number): Promise<void> {
  const json = {
    machine,
    date: new Date().toISOString(),
    load: loadavg().map((n) => round(n, 2)),
    seconds_per_scenario: seconds,
    modes: results.map((r) => ({
      mode: r.mode,
      database: r.database,
      queue: r.queue,
      clients: r.clients,
      turns: r.turns,
      turns_per_s: round(r.turnsPerSecond),
      latency_p50_ms: round(r.latencyP50),
      latency_p99_ms: round(r.latencyP99),
      overhead_p50_ms: round(r.overheadP50),
      overhead_p99_ms: round(r.overheadP99),
    })),
  };
  await mkdir(new URL('./', MODES_RESULTS_FILE), { recursive: true });
  await writeFile(MODES_RESULTS_FILE, `${JSON.stringify(json, null, 2)}\n`);
}
