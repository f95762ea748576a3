import { machineLine, table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import type { ScenarioResult } from './pipeline-bench.ts';

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const seconds = Number(process.env.BENCH_SECONDS ?? 8);

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function main(): Promise<void> {
  console.log(`# Herald benchmarks\n\n${machineLine()}\n`);
  const bench = new PipelineBench();
  progress('starting ingress and fake model');
  await bench.start();
  try {
    const results: ScenarioResult[] = [];
    for (const workers of [1, 2]) {
      for (const clients of [1, 32]) {
        progress(`zero-latency model: ${workers} worker process(es), ${clients} client(s), ${seconds}s`);
        results.push(await bench.run({ workers, clients, modelLatencyMs: 0, durationMs: seconds * 1000 }, `z${workers}-${clients}`));
      }
    }
    const rss = await bench.workerRssMb();
    const base = results.find((r) => r.workers === 1 && r.clients === 32)?.turnsPerSecond ?? Number.NaN;
    console.log('## Turns per second and harness overhead, model answering instantly\n');
    console.log(
      'Overhead = ingress commit of the message to reply stored, minus the time the fake model spent answering. ' +
        'Targets (../shared/TARGETS.md): overhead p50 <= 5 ms, p99 <= 20 ms; >= 800 turns/s. ' +
        'Reference on the same kind of machine: bare HTTP -> commit -> BullMQ -> worker -> commit pipeline p50 2.4 ms, ' +
        '1,100-1,750 turns/s; OpenClaw p50 195-260 ms, 3.3-4.8 turns/s.\n',
    );
    console.log(
      table(
        ['worker processes', 'clients', 'turns', 'turns/s', 'vs 1 worker', 'client latency p50 ms', 'p99 ms', 'overhead p50 ms', 'overhead p99 ms'],
        results.map((r) => [
          r.workers,
          r.clients,
          r.turns,
          fmt(r.turnsPerSecond),
          r.clients === 32 ? `${fmt(r.turnsPerSecond / base, 2)}x` : '',
          fmt(r.latencyP50),
          fmt(r.latencyP99),
          fmt(r.overheadP50),
          fmt(r.overheadP99),
        ]),
      ),
    );
    console.log(`\nworker RSS after the runs: ${rss.map((mb) => `${fmt(mb, 0)} MB`).join(', ')}`);
  } finally {
    await bench.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
