// One point of the turns bench in a process of its own, printed as one JSON line: Herald's compiled
// roles of the checkout this file sits in, or the reference pipeline (`reference` as the first
// argument). bench/compare-builds.ts copies it into another checkout to run that build's Herald
// beside this one's. Uses only what the turns bench had on 2026-12-02 (PipelineBench,
// ReferenceBench, the counters, measurePoint), so an older checkout runs it unchanged.
// Run: npx tsx bench/turn-point.ts herald|reference '{"workers":1,"clients":32,"modelLatencyMs":0,"concurrency":64,"durationMs":8000}'
import { PipelineBench } from './pipeline-bench.ts';
import { ReferenceBench } from './reference-pipeline/stack.ts';
import { PrivateRedis, StatementCounter } from './turns/counters.ts';
import { measurePoint } from './turns/measure.ts';
import type { Scenario } from './turns/drive.ts';

const [which = 'herald', scenarioJson = '{}'] = process.argv.slice(2);
const scenario = JSON.parse(scenarioJson) as Scenario;
const redis = await PrivateRedis.start();
const counter = await StatementCounter.create();
const env = { REDIS_URL: redis.url, ...counter.env };
const target = which === 'reference' ? new ReferenceBench(env) : new PipelineBench({ env });
await target.start();
try {
  const measured = await measurePoint(target, { redis, counter }, scenario, which);
  console.log(JSON.stringify({ ...measured.point, driver_cpu_ms_per_turn: measured.driverCpuMsPerTurn }));
} finally {
  await target.stop();
  await counter.close();
  await redis.stop();
}
process.exit(0);
