import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCacheShare } from './cache-bench.ts';
import { runDeliveryBench } from './delivery-bench.ts';
import { measureLeaseCost } from './lease-bench.ts';
import { machineLine, table } from './machine.ts';
import { runTurnsBench, turnsMarkdown, TURNS_RESULTS_FILE, writeTurnsResults } from './turns-bench.ts';
import { createTestDatabase } from '../test/support/test-database.ts';
import { printImportBench, runImportBench } from './import-bench.ts';
import { MODES_RESULTS_FILE, printModesBench, runModesBench, writeModesJson } from './modes-bench.ts';
import { runCompressionBench } from './compression-bench.ts';
import { runHooksBench } from './hooks-bench.ts';
import { loadavg } from 'node:os';
import { printConsoleBench, runConsoleBench, writeConsoleJson, CONSOLE_RESULTS_FILE } from './console-bench.ts';

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const seconds = Number(process.env.BENCH_SECONDS ?? 8);

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** The one version of better-sqlite3 the search comparison was measured with. */
const SQLITE_PACKAGE = 'better-sqlite3@12.9.0';

/**
 * The search comparison needs better-sqlite3, a native module that compiles from source, so it is
 * not in the default install: the first search run installs it into bench/node_modules (bench/
 * package.json allows its build script), where bench/sqlite.ts imports it only now. Without make,
 * g++ and python3 that fails, and the rest of the benchmarks still run; the search part says what
 * to install.
 */
function ensureSqlite(): void {
  const bench = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(bench, 'node_modules', 'better-sqlite3', 'package.json'))) return;
  progress(
    `the search comparison runs SQLite FTS5 through better-sqlite3, a native module left out of \`npm ci\` because it compiles from source; ` +
      `installing ${SQLITE_PACKAGE} into bench/node_modules once (needs make, g++ and python3)`,
  );
  spawnSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', bench, SQLITE_PACKAGE], { stdio: 'inherit' });
}

async function searchBench(): Promise<void> {
  ensureSqlite();
  const bench = await import('./search-bench.ts');
  const { SqliteMissingError } = await import('./sqlite.ts');
  try {
    const result = await bench.runSearchBench(progress);
    bench.printSearchBench(result);
    await bench.writeSearchJson(result, machineLine());
    progress(`wrote ${bench.SEARCH_RESULTS_FILE.pathname}`);
  } catch (error) {
    if (!(error instanceof SqliteMissingError)) throw error;
    console.log(`\n## History search\n\nSkipped: ${error.message}`);
  }
}

async function searchOnly(): Promise<void> {
  console.log(`# Herald benchmarks: history search\n\n${machineLine()}`);
  await searchBench();
}

async function compareBench(): Promise<void> {
  const args = process.argv.slice(2);
  const before = args[args.indexOf('--before') + 1];
  if (!args.includes('--before') || before === undefined) throw new Error('compare needs --before DIR: a checkout of the other commit, built with npm run build');
  console.log(
    `# Herald benchmarks: two builds against the reference\n\n${machineLine()}, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  const bench = await import('./compare-builds.ts');
  const result = bench.runCompare(before, Number(process.env.BENCH_ROUNDS ?? 3), seconds, progress);
  bench.printCompare(result);
  await bench.writeCompareJson(result);
  progress(`wrote ${bench.COMPARE_RESULTS_FILE.pathname}`);
}

async function modesBench(): Promise<void> {
  const results = await runModesBench(progress, seconds);
  printModesBench(results);
  await writeModesJson(results, machineLine(), seconds);
  progress(`wrote ${MODES_RESULTS_FILE.pathname}`);
}

async function importBench(): Promise<void> {
  printImportBench(await runImportBench(Number(process.env.BENCH_IMPORT_MESSAGES ?? 1_000_000), progress));
}

async function deliveryBench(): Promise<void> {
  const results = await runDeliveryBench(progress);
  console.log('\n## 6. Delivery latency: transactional outbox against pg-boss jobs\n');
  console.log('Reply committed to the fake Telegram confirming it, open-loop sends over 16 chats (bench/delivery-bench.ts). ' + 'The decision this informs: docs/decisions/2026-12-01-pg-boss.md.\n');
  console.log(
    table(
      ['path', 'replies/s', 'replies', 'p50 ms', 'p99 ms', 'max ms'],
      results.map((r) => [r.path, r.rate, r.messages, fmt(r.p50), fmt(r.p99), fmt(r.max)]),
    ),
  );
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN);
};

async function compressionBench(): Promise<void> {
  const turns = Number(process.env.BENCH_COMPRESSION_TURNS ?? 200);
  const runs = [];
  for (const compress of [false, true]) {
    progress(`${turns}-turn session, ${compress ? 'with' : 'without'} compression`);
    runs.push(await runCompressionBench(compress, turns));
  }
  console.log(`\n## 8. Long sessions: input tokens per turn over ${turns} turns, with and without compression\n`);
  console.log(
    'One chat through ingress and a worker against the fake OpenAI server (bench/compression-bench.ts); tokens are the ' +
      "prompt sizes the fake provider counted, per model call. A compression's time runs from its claim to its commit; " +
      "the summariser call is the fake answering at once, so the rest is Herald's own share.\n",
  );
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  console.log(
    table(
      ['variant', 'model calls', 'input tokens', 'per call mean', 'last 20 calls mean', 'max', 'compressions', 'compression p50 ms', 'summariser call p50 ms'],
      runs.map((r) => [
        r.variant,
        r.inputTokens.length,
        sum(r.inputTokens),
        fmt(sum(r.inputTokens) / r.inputTokens.length, 0),
        fmt(sum(r.inputTokens.slice(-20)) / Math.min(20, r.inputTokens.length), 0),
        Math.max(...r.inputTokens),
        r.compressions,
        fmt(median(r.compressionMs)),
        fmt(median(r.summaryMs)),
      ]),
    ),
  );
  // Input tokens per turn: the first model call of every 25th turn, each variant a row.
  const marks = [1, ...Array.from({ length: Math.floor(turns / 25) }, (_, i) => (i + 1) * 25)].filter((turn) => turn <= turns);
  console.log('\nInput tokens of the first model call of a turn, by turn:\n');
  console.log(
    table(
      ['variant', ...marks.map((turn) => `turn ${turn}`)],
      runs.map((r) => [r.variant, ...marks.map((turn) => fmt(r.perTurn[turn - 1] ?? Number.NaN, 0))]),
    ),
  );
  const compressing = runs.find((r) => r.compressions > 0);
  if (compressing) {
    console.log('\nEach compression, claim to commit, beside its summariser call (ms):\n');
    console.log(
      table(
        ['compression', 'whole', 'summariser call', "Herald's own share"],
        compressing.compressionMs.map((ms, i) => {
          const summary = compressing.summaryMs[i] ?? Number.NaN;
          return [i + 1, fmt(ms), fmt(summary), fmt(ms - summary)];
        }),
      ),
    );
  }
}

async function hooksBench(): Promise<void> {
  const rows = await runHooksBench(Number(process.env.BENCH_HOOK_TURNS ?? 100), progress);
  console.log('\n## 7. Lifecycle hooks: ten no-op module hooks per turn against none\n');
  console.log('One client, turns of one tool call and two model calls, sent alternately to two stacks in this process (bench/hooks-bench.ts).\n');
  const base = rows[0]?.p50 ?? Number.NaN;
  console.log(
    table(
      ['variant', 'turns', 'latency p50 ms', 'p99 ms', 'mean ms', 'p50 vs none'],
      rows.map((r) => [r.variant, r.turns, fmt(r.p50), fmt(r.p99), fmt(r.mean), `${fmt(r.p50 - base)} ms`]),
    ),
  );
}

/** Sections 1 and 2: Herald against the bare reference pipeline, written to bench/results/turns.json. */
async function turnsBench(): Promise<void> {
  const result = await runTurnsBench(progress, seconds);
  const markdown = turnsMarkdown(result);
  console.log(markdown);
  await writeTurnsResults(result, markdown);
  progress(`wrote ${TURNS_RESULTS_FILE.pathname}`);
}

/** Issue 41 points 5 and 6: a turn of four model steps, and a turn at message 1,000 against one at 10. */
async function turnShapesBench(): Promise<void> {
  const bench = await import('./turn-shapes-bench.ts');
  console.log(
    `# Herald benchmarks: realistic turns and long sessions\n\n${machineLine()}, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  if (process.argv.slice(2).includes('realistic')) {
    const result = await bench.runRealisticBench(progress, seconds);
    console.log(`\n## Realistic turns\n\n${bench.realisticMarkdown(result)}`);
    await bench.addToTurnsResults('realistic', result);
  }
  if (process.argv.slice(2).includes('long')) {
    const result = await bench.runLongSessionBench(progress);
    console.log(`\n## Long sessions\n\n${bench.longSessionMarkdown(result)}`);
    await bench.addToTurnsResults('long_session', result);
  }
  console.log(
    `load average at the end ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  progress(`wrote ${TURNS_RESULTS_FILE.pathname}`);
}

async function consoleBench(): Promise<void> {
  const result = await runConsoleBench(
    progress,
    () =>
      `load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
  );
  printConsoleBench(result);
  await writeConsoleJson(result, machineLine());
  progress(`wrote ${CONSOLE_RESULTS_FILE.pathname}`);
}

async function streamingBench(): Promise<void> {
  const bench = await import('./streaming-bench.ts');
  const result = await bench.runStreamingBench(progress);
  bench.printStreamingBench(result);
  await bench.writeStreamingJson(result);
  progress(`wrote ${bench.STREAMING_RESULTS_FILE.pathname}`);
}

async function main(): Promise<void> {
  // `npm run bench -- search` runs only the history search part, `-- import` only the Hermes
  // import, `-- delivery` only the delivery latency.
  if (process.argv.slice(2).includes('search')) return searchOnly();
  if (process.argv.slice(2).includes('import')) {
    console.log(`# Herald benchmarks: importing a Hermes home\n\n${machineLine()}`);
    return importBench();
  }
  // `npm run bench -- sizing` runs only the sizing table of docs/operations.md.
  if (process.argv.slice(2).includes('sizing')) {
    console.log(`# Herald benchmarks: sizing\n\n${machineLine()}\nEach scenario runs ${seconds} s (BENCH_SECONDS).\n`);
    return (await import('./sizing-bench.ts')).runSizing(progress, seconds);
  }
  // `-- modes`: only the run-mode comparison (embedded Postgres, queue on Postgres, Redis).
  if (process.argv.slice(2).includes('modes')) {
    console.log(`# Herald benchmarks: run modes\n\n${machineLine()}\nEach scenario runs ${seconds} s (BENCH_SECONDS).`);
    return modesBench();
  }
  // `npm run bench -- compression` runs only the long-session comparison.
  if (process.argv.slice(2).includes('compression')) {
    console.log(`# Herald benchmarks: long sessions\n\n${machineLine()}`);
    return compressionBench();
  }
  if (process.argv.slice(2).includes('hooks')) {
    console.log(`# Herald benchmarks: lifecycle hooks\n\n${machineLine()}`);
    return hooksBench();
  }
  // `npm run bench -- compare --before DIR`: Herald built in another checkout against this one, interleaved with the reference.
  if (process.argv.slice(2).includes('compare')) return compareBench();
  // `npm run bench -- turns`: only Herald against the reference pipeline (sections 1 and 2).
  if (process.argv.slice(2).includes('scale')) {
    const bench = await import('./scale-bench.ts');
    console.log(
      `# Herald benchmarks: workers as machines\n\n${machineLine()}, load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    const result = await bench.runScaleBench(progress, seconds);
    bench.printScaleBench(result);
    await bench.writeScaleJson(result);
    progress(`wrote ${bench.SCALE_RESULTS_FILE.pathname}`);
    return;
  }
  // `-- realistic` and `-- long`: issue 41's points 5 and 6, added to bench/results/turns.json.
  if (process.argv.slice(2).includes('realistic') || process.argv.slice(2).includes('long')) return turnShapesBench();
  if (process.argv.slice(2).includes('turns')) {
    console.log(`# Herald benchmarks: turns against the reference pipeline\n\n${machineLine()}\nEach point runs ${seconds} s (BENCH_SECONDS).\n`);
    return turnsBench();
  }
  // `-- console`: only the console's long-transcript open time.
  if (process.argv.slice(2).includes('console')) {
    console.log(`# Herald benchmarks: the console\n\n${machineLine()}`);
    return consoleBench();
  }
  // `-- prompt`: the fixed prompt (system prompt + default tool schemas) in o200k_base tokens.
  if (process.argv.slice(2).includes('prompt')) {
    console.log(`# Herald benchmarks: the fixed prompt\n\n${machineLine()}`);
    return (await import('./prompt-size.ts')).promptBench(machineLine());
  }
  // `-- subagents`: delegate_task's fan-out of 8 children on 1, 2 and 4 worker processes.
  if (process.argv.slice(2).includes('subagents')) {
    console.log(`# Herald benchmarks: subagents\n\n${machineLine()}`);
    return (await import('./subagents-bench.ts')).subagentsBench(progress);
  }
  // `-- streaming`: time to the first streamed delta beside the whole reply.
  if (process.argv.slice(2).includes('streaming')) {
    console.log(`# Herald benchmarks: live turns\n\n${machineLine()}`);
    return streamingBench();
  }
  if (process.argv.slice(2).includes('delivery')) {
    console.log(`# Herald benchmarks: delivery latency\n\n${machineLine()}`);
    return deliveryBench();
  }
  console.log(
    `# Herald benchmarks\n\n${machineLine()}\nEach scenario runs ${seconds} s (BENCH_SECONDS). Everything shares this machine: ingress, workers, Postgres, Redis, the fake model and the clients.\n`,
  );
  await turnsBench();

  progress('lease cost');
  const leaseDatabase = await createTestDatabase();
  try {
    const lease = await measureLeaseCost(leaseDatabase.url);
    console.log('\n## 3. What the session lease costs per turn\n');
    console.log(
      table(
        ['claim + release p50 ms', 'claim + release p99 ms', 'fenced write p50 ms', 'same write unfenced p50 ms', 'fence overhead per write ms'],
        [[fmt(lease.claimReleaseP50, 2), fmt(lease.claimReleaseP99, 2), fmt(lease.fencedWriteP50, 2), fmt(lease.plainWriteP50, 2), fmt(lease.fencedWriteP50 - lease.plainWriteP50, 2)]],
      ),
    );
  } finally {
    await leaseDatabase.drop();
  }

  await modesBench();

  progress('prompt cache share over a 20-turn session');
  const herald = await measureCacheShare(false);
  const naive = await measureCacheShare(true);
  console.log('\n## 4. Input tokens served from the provider cache, 20-turn session with memory writes and worker hops\n');
  console.log(
    'The fake OpenAI server accounts cached tokens like the provider (longest previously seen prefix per prompt_cache_key, ' +
      '128-token steps from 1,024). Target: Herald >= 95% of the prefix-stable maximum.\n',
  );
  console.log(
    table(
      ['variant', 'model calls', 'input tokens', 'cached tokens', 'cached share', 'distinct system+tools prefixes'],
      [herald, naive].map((r) => [r.variant, r.calls, r.inputTokens, r.cachedTokens, `${fmt((100 * r.cachedTokens) / r.inputTokens)}%`, r.distinctPrefixes]),
    ),
  );

  progress('history search');
  await searchBench();
  progress('importing a Hermes home');
  await importBench();
  progress('delivery latency');
  await deliveryBench();
  progress('live turns');
  await streamingBench();
  progress('lifecycle hooks');
  await hooksBench();
  await compressionBench();
  progress('console');
  await consoleBench();
  progress('fixed prompt');
  await (await import('./prompt-size.ts')).promptBench(machineLine());
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
