// Spawn to ready and RSS of each compiled role (issue 18: every role ready within 1 s; worker
// <= 150 MB, ingress <= 120 MB). Ready is what the turns benchmark waits for (pipeline-bench.ts):
// the role's start line on its output. Each role is spawned alone, one after the other, against a
// fresh migrated database and the local Redis, with the turns benchmark's environment.
// Run: npm run build && npx tsx bench/startup-bench.ts [N] [role ...]
import { loadavg } from 'node:os';
import { readFile } from 'node:fs/promises';
import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import { createTestDatabase, uniquePrefix } from '../test/support/test-database.ts';
import { HERALD_BUILT_BIN, spawnHerald, stopProcess, TEST_TOKEN, waitFor } from '../test/support/stack.ts';

const READY_LINE: Record<string, string> = {
  ingress: 'ingress listening',
  worker: 'worker started',
  reviewer: 'reviewer started',
  scheduler: 'scheduler started',
};

/** CPU (user + system) the process has used, in ms, and its resident set in MB, from /proc. */
async function procSample(pid: number): Promise<{ cpuMs: number; rssMb: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  const cpuMs = (Number(fields[11]) + Number(fields[12])) * 10;
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { cpuMs, rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5);
  const roles = process.argv.length > 3 ? process.argv.slice(3) : Object.keys(READY_LINE);
  const fake = await startFakeOpenAI();
  const database = await createTestDatabase();
  const env = {
    DATABASE_URL: database.url,
    PORT: String(20000 + Math.floor(Math.random() * 20000)),
    HERALD_API_TOKEN: TEST_TOKEN,
    HERALD_QUEUE_PREFIX: uniquePrefix(),
    HERALD_MODEL: 'openai/bench',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: 'sk-bench',
    HERALD_WORKER_CONCURRENCY: '64',
    HERALD_DB_POOL_SIZE: '16',
    HERALD_METRICS_PORT: '0',
    LOG_LEVEL: 'info',
  };
  const nodeArgs = (process.env.STARTUP_NODE_ARGS ?? '').split(' ').filter(Boolean);
  console.log(
    `load before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; node args: ${nodeArgs.join(' ') || '(none)'}`,
  );
  try {
    for (const role of roles) {
      const samples: { readyMs: number; cpuMs: number; rssMb: number; rss1sMb: number }[] = [];
      for (let i = 0; i < runs; i++) {
        const spawned = performance.now();
        const child = spawnHerald(role, env, HERALD_BUILT_BIN, nodeArgs);
        const line = READY_LINE[role] ?? `${role} started`;
        await waitFor(async () => child.output().includes(line) || child.child.exitCode !== null, { timeoutMs: 60_000, what: role, intervalMs: 5 });
        const readyMs = performance.now() - spawned;
        if (child.child.exitCode !== null) throw new Error(`${role} exited: ${child.output().slice(-2000)}`);
        const atReady = await procSample(child.child.pid ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const settled = await procSample(child.child.pid ?? 0);
        samples.push({ readyMs, cpuMs: atReady.cpuMs, rssMb: atReady.rssMb, rss1sMb: settled.rssMb });
        await stopProcess(child, 'SIGTERM');
      }
      const col = (key: keyof (typeof samples)[number]) => samples.map((s) => s[key].toFixed(0)).join(' ');
      console.log(
        `${role.padEnd(9)} ready ms: ${col('readyMs')} (median ${median(samples.map((s) => s.readyMs)).toFixed(0)}); ` +
          `cpu ms at ready: ${col('cpuMs')} (median ${median(samples.map((s) => s.cpuMs)).toFixed(0)}); ` +
          `rss MB at ready: ${col('rssMb')}; 1 s later: ${col('rss1sMb')}`,
      );
    }
  } finally {
    console.log(
      `load after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    await database.drop();
    await fake.close();
  }
}

await main();
