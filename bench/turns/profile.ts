/**
 * Where a Herald turn's time and round trips go: one ingress and one worker under `clients`
 * closed-loop clients for BENCH_SECONDS, the roles profiled with node --cpu-prof and every
 * statement tallied by text (count-statements.mjs). Prints the top functions by self time per role
 * and the statements per turn. `npx tsx bench/turns/profile.ts [clients] [long]` after `npm run build`;
 * `long`: each client's session seeded to 1,000 messages first (issue 41 point 6); `realistic`: turns
 * of four model steps, three `todo` calls and the answer (issue 41 point 5). BENCH_MODEL_MS=200 BENCH_SESSIONS=8 with 64
 * clients profiles the scaling point (where the ingress's `?wait` poll showed).
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PipelineBench } from '../pipeline-bench.ts';
import { StatementCounter, PrivateRedis } from './counters.ts';
import { LONG_SESSION_MESSAGES, seedSessions } from '../turn-shapes-bench.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** Self-time share per function of one .cpuprofile, the top `limit`. */
export function topFunctions(profile: { nodes: ProfileNode[] }, limit = 15): { name: string; share: number }[] {
  const self = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    total += hits;
    const url = node.callFrame.url
      .replace(/^.*node_modules\//, '')
      .replace(/^.*wt-[^/]+\//, '')
      .replace(/^file:\/\//, '');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + hits);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, hits]) => ({ name, share: hits / Math.max(1, total) }));
}

async function main(): Promise<void> {
  const clients = Number(process.argv[2] ?? 1);
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  const profiles = await mkdtemp(join(tmpdir(), 'herald-prof-'));
  const redis = await PrivateRedis.start();
  const counter = await StatementCounter.create();
  const env = { REDIS_URL: redis.url, ...counter.env, BENCH_SQL_TEXT: '1' };
  const bench = new PipelineBench({ env, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`] });
  await bench.start();
  try {
    const chatPrefix = `profile-${Date.now()}`;
    const steps = process.argv.includes('realistic') ? 4 : 1;
    await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: 1000, turnsPerClient: 1, chatPrefix }, 'open');
    if (process.argv[3] === 'long') await seedSessions(bench.databaseUrl, chatPrefix, LONG_SESSION_MESSAGES - 2);
    await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: 1000, chatPrefix, steps }, 'warm');
    const before = await counter.total([bench.pids.ingress, ...bench.pids.workers]);
    // BENCH_MODEL_MS and BENCH_SESSIONS: the turns bench's scaling point (200 ms, 8 sessions at a time) instead of an instant model.
    const slow = { concurrency: Number(process.env.BENCH_SESSIONS ?? 64), modelLatencyMs: Number(process.env.BENCH_MODEL_MS ?? 0) };
    const result = await bench.run({ workers: 1, ...slow, clients, durationMs: seconds * 1000, chatPrefix, steps }, 'profile');
    const statements = (await counter.total([bench.pids.ingress, ...bench.pids.workers])) - before;
    console.log(`${result.turns} turns, ${(statements / result.turns).toFixed(1)} statements per turn (counts below include the warm-up)`);
    for (const [role, pid] of [
      ['ingress', bench.pids.ingress],
      ['worker', bench.pids.workers[0] ?? 0],
    ] as const) {
      const tally = JSON.parse(await readFile(join(counter.dir, `${pid}.sql.json`), 'utf8')) as Record<string, number>;
      console.log(`\n${role} statements:`);
      for (const [text, n] of Object.entries(tally).slice(0, 25)) console.log(`${String(n).padStart(6)}  ${text}`);
    }
  } finally {
    await bench.stop();
    await counter.close();
    await redis.stop();
  }
  for (const file of (await readdir(profiles)).filter((name) => name.endsWith('.cpuprofile'))) {
    console.log(`\n${file}:`);
    const top = topFunctions(JSON.parse(await readFile(join(profiles, file), 'utf8')) as { nodes: ProfileNode[] });
    for (const { name, share } of top) console.log(`${(share * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
  console.log(`\nprofiles kept in ${profiles}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
