import { table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import type { PipelineOptions, ScenarioResult } from './pipeline-bench.ts';

export interface ModeResult extends ScenarioResult {
  mode: string;
}

const MODES: ReadonlyArray<{ mode: string; options: PipelineOptions }> = [
  { mode: 'external Postgres, queue on Redis', options: { queue: 'redis' } },
  { mode: 'external Postgres, queue on Postgres', options: { queue: 'postgres' } },
  { mode: 'embedded Postgres, queue on Postgres', options: { queue: 'postgres', embedded: true } },
];

/**
 * The same miniature deployment (one ingress, one worker process, zero-latency model) in each
 * run mode, at 1 and 32 clients: what embedded mode and the queue on Postgres cost against Redis.
 */
export async function runModesBench(progress: (message: string) => void, seconds: number): Promise<ModeResult[]> {
  const results: ModeResult[] = [];
  for (const { mode, options } of MODES) {
    const bench = new PipelineBench(options);
    progress(`run modes: starting ${mode}`);
    await bench.start();
    try {
      for (const clients of [1, 32]) {
        progress(`run modes: ${mode}, ${clients} client(s)`);
        const result = await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: seconds * 1000 }, `m${results.length}`);
        results.push({ ...result, mode });
      }
    } finally {
      await bench.stop();
    }
  }
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
