import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import { delegatingModel } from '../test/support/delegating-model.ts';
import { startStack } from '../test/support/stack.ts';
import type { HeraldProcess } from '../test/support/stack.ts';
import { machineLine, percentile, table } from './machine.ts';

export interface SubagentsRow {
  worker_processes: number;
  slots: number;
  rounds: number;
  wall_ms_p50: number;
  wall_ms_max: number;
  ideal_ms: number;
  overhead_ms_p50: number;
}

const CHILDREN = 8;
const MODEL_MS = 200;

/**
 * One delegate_task call fanning out to 8 children, every model call taking 200 ms, on 1, 2 and 4
 * `herald worker` processes of one slot each. Wall time: the person's message accepted to the
 * parent's reply stored. Ideal: the parent's two model calls plus ceil(8 / slots) rounds of
 * children, each one model call (the parent holds no slot while it waits).
 */
export async function runSubagentsBench(progress: (line: string) => void, rounds: number): Promise<SubagentsRow[]> {
  const model = delegatingModel({ childMs: MODEL_MS });
  const fake = await startFakeOpenAI({
    handler: async (request) => {
      // Parent calls take the same 200 ms as the children's.
      if (!request.system.includes('focused subagent')) await new Promise((resolve) => setTimeout(resolve, MODEL_MS));
      return model.handler(request);
    },
  });
  const stack = await startStack({
    model: fake,
    workerProcesses: true,
    env: { HERALD_WORKER_CONCURRENCY: '1', HERALD_DELEGATION_MAX_CONCURRENT_CHILDREN: String(CHILDREN) },
  });
  const rows: SubagentsRow[] = [];
  const workers: HeraldProcess[] = [];
  try {
    for (const count of [1, 2, 4]) {
      while (workers.length < count) {
        progress(`starting worker ${workers.length + 1}`);
        workers.push(await stack.startProcess('worker'));
      }
      const walls: number[] = [];
      for (let round = 0; round <= rounds; round++) {
        const tasks = Array.from({ length: CHILDREN }, (_, i) => ({ goal: `w${count} r${round} task ${i}` }));
        const started = performance.now();
        const sent = await stack.post('/v1/messages', { chat_id: `fan-${count}-${round}`, user_id: 'bench', text: `delegate: ${JSON.stringify({ tasks })}` });
        await stack.waitForEvent(sent.body.event_id as string, 120_000);
        // Round 0 warms the processes up (first use of each code path) and is not counted.
        if (round > 0) walls.push(performance.now() - started);
      }
      const ideal = 2 * MODEL_MS + Math.ceil(CHILDREN / count) * MODEL_MS;
      const p50 = percentile(walls, 50);
      rows.push({
        worker_processes: count,
        slots: count,
        rounds,
        wall_ms_p50: Math.round(p50),
        wall_ms_max: Math.round(Math.max(...walls)),
        ideal_ms: ideal,
        overhead_ms_p50: Math.round(p50 - ideal),
      });
      progress(`${count} worker process(es): p50 ${Math.round(p50)} ms (ideal ${ideal} ms)`);
    }
  } finally {
    await stack.stop();
  }
  return rows;
}

export async function subagentsBench(progress: (line: string) => void): Promise<void> {
  const rounds = Number(process.env.BENCH_SUBAGENT_ROUNDS ?? 5);
  const load = loadavg().map((value) => value.toFixed(2));
  const rows = await runSubagentsBench(progress, rounds);
  console.log(`\n## Subagents: a fan-out of ${CHILDREN} children, ${MODEL_MS} ms model, on 1, 2 and 4 worker processes\n`);
  console.log(`One slot per worker process (HERALD_WORKER_CONCURRENCY=1); ${rounds} rounds each after one warm-up; load average at start ${load.join(' ')} (bench/subagents-bench.ts).\n`);
  console.log(
    table(
      ['worker processes', 'slots', 'wall p50 ms', 'wall max ms', 'ideal ms', 'p50 over ideal ms', 'p50 / ideal'],
      rows.map((r) => [r.worker_processes, r.slots, r.wall_ms_p50, r.wall_ms_max, r.ideal_ms, r.overhead_ms_p50, (r.wall_ms_p50 / r.ideal_ms).toFixed(2)]),
    ),
  );
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'subagents.json');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify({ machine: machineLine(), load_average: load, children: CHILDREN, model_latency_ms: MODEL_MS, rows }, null, 2)}\n`);
  console.log(`\nwritten: bench/results/subagents.json`);
}
