import { readdir, readFile, readlink } from 'node:fs/promises';
import { table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import type { Scenario, ScenarioResult } from './pipeline-bench.ts';

/** Postgres connections (TCP to port 5432) a process holds: its socket inodes against /proc/net/tcp. */
async function postgresConnections(pid: number): Promise<number> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]!);
  }
  let count = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // rem_address is hex ip:port; 1538 is 5432; state 01 is ESTABLISHED.
      if (fields[2]?.endsWith(':1538') && fields[3] === '01' && inodes.has(fields[9] ?? '')) count++;
    }
  }
  return count;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface SizingRow {
  result: ScenarioResult;
  workerConnections: number;
  ingressConnections: number;
  workerRssMb: number;
  ingressRssMb: number;
}

/** Runs a scenario on one worker process while sampling its Postgres connections (the peak counts). */
async function measure(bench: PipelineBench, scenario: Scenario, label: string): Promise<SizingRow> {
  let workerConnections = 0;
  let ingressConnections = 0;
  let sampling: Promise<void> = Promise.resolve();
  const sampler = setInterval(() => {
    sampling = sampling.then(async () => {
      const { ingress, workers } = bench.pids;
      ingressConnections = Math.max(ingressConnections, await postgresConnections(ingress));
      for (const pid of workers) workerConnections = Math.max(workerConnections, await postgresConnections(pid));
    });
  }, 250);
  const result = await bench.run(scenario, label).finally(() => clearInterval(sampler));
  await sampling;
  const { ingress, workers } = bench.pids;
  return { result, workerConnections, ingressConnections, workerRssMb: await rssMb(workers[0] ?? 0), ingressRssMb: await rssMb(ingress) };
}

/**
 * `npm run bench -- sizing`: what one worker process carries at the default concurrency (16), with
 * an instant model (CPU-bound) and a 200 ms one (slot-bound), the memory it holds after, and the
 * Postgres connections each role's pod opens at HERALD_DB_POOL_SIZE.
 */
export async function runSizing(progress: (message: string) => void, seconds: number): Promise<void> {
  const bench = new PipelineBench();
  await bench.start();
  const rows: SizingRow[] = [];
  try {
    for (const modelLatencyMs of [0, 200, 1000]) {
      progress(`sizing: 1 worker, concurrency 16, 32 clients, ${modelLatencyMs} ms model`);
      rows.push(await measure(bench, { workers: 1, concurrency: 16, clients: 32, modelLatencyMs, durationMs: seconds * 1000 }, `sizing${modelLatencyMs}`));
    }
  } finally {
    await bench.stop();
  }
  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  console.log('## Sizing: one worker process (HERALD_WORKER_CONCURRENCY=16, HERALD_DB_POOL_SIZE=16), 32 clients\n');
  console.log(
    table(
      ['model latency ms', 'turns/s per worker', 'slot-bound ideal turns/s', 'client p50 ms', 'p99 ms', 'worker RSS MB', 'ingress RSS MB', 'Postgres connections: worker', 'ingress'],
      rows.map(({ result, workerConnections, ingressConnections, workerRssMb, ingressRssMb }) => [
        result.modelLatencyMs,
        fmt(result.turnsPerSecond),
        result.modelLatencyMs === 0 ? '-' : fmt((16 * 1000) / result.modelLatencyMs),
        fmt(result.latencyP50),
        fmt(result.latencyP99),
        fmt(workerRssMb, 0),
        fmt(ingressRssMb, 0),
        workerConnections,
        ingressConnections,
      ]),
    ),
  );
}
