import { readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { createDb } from '@herald/db';
import { table } from './machine.ts';
import { PipelineBench } from './pipeline-bench.ts';
import { ReferenceBench } from './reference-pipeline/stack.ts';
import { PrivateRedis, StatementCounter } from './turns/counters.ts';
import { measurePoint } from './turns/measure.ts';
import type { Meters, TurnsPoint } from './turns/measure.ts';
import type { Scenario } from './turns/drive.ts';
import { TURNS_RESULTS_FILE } from './turns-bench.ts';

/** Issue 41 point 5: three `todo` calls and an answer per turn, a 200 ms model, 8 sessions on one worker. */
export const REALISTIC_STEPS = 4;

/** Issue 41 point 6: the seeded transcript's length, and the turns each long or short session runs. */
export const LONG_SESSION_MESSAGES = 1000;
const SESSIONS = 16;

/** A point divided by its model steps: what issue 41 point 5 bounds. */
export interface StepFigures {
  steps: number;
  overhead_p50_ms_per_step: number;
  overhead_p99_ms_per_step: number;
  cpu_ms_per_step: TurnsPoint['cpu_ms_per_turn'];
  sql_per_step: number;
}

const round = (n: number) => Number(n.toFixed(2));

export function perStep(point: TurnsPoint, steps: number): StepFigures {
  const cpu = Object.fromEntries(Object.entries(point.cpu_ms_per_turn).map(([k, v]) => [k, round(v / steps)])) as TurnsPoint['cpu_ms_per_turn'];
  return {
    steps,
    overhead_p50_ms_per_step: round(point.overhead_p50_ms / steps),
    overhead_p99_ms_per_step: round(point.overhead_p99_ms / steps),
    cpu_ms_per_step: cpu,
    sql_per_step: round(point.sql_per_turn / steps),
  };
}

async function withMeters<T>(run: (meters: Meters, env: Record<string, string>) => Promise<T>): Promise<T> {
  const redis = await PrivateRedis.start();
  const counter = await StatementCounter.create();
  try {
    return await run({ redis, counter }, { REDIS_URL: redis.url, ...counter.env });
  } finally {
    await counter.close();
    await redis.stop();
  }
}

export interface RealisticResult {
  reference: TurnsPoint & StepFigures;
  herald: TurnsPoint & StepFigures;
}

/** The reference pipeline, then Herald, each turn four model steps. */
export async function runRealisticBench(progress: (message: string) => void, seconds: number): Promise<RealisticResult> {
  const scenario: Scenario = { workers: 1, concurrency: 8, clients: 8, modelLatencyMs: 200, durationMs: seconds * 1000, steps: REALISTIC_STEPS };
  return withMeters(async (meters, env) => {
    const points: (TurnsPoint & StepFigures)[] = [];
    for (const [name, target] of [
      ['reference', new ReferenceBench(env)],
      ['herald', new PipelineBench({ env })],
    ] as const) {
      progress(`${name}: ${REALISTIC_STEPS} model steps per turn, 200 ms model, 8 clients`);
      await target.start();
      try {
        const { point } = await measurePoint(target, meters, scenario, `real-${name}`);
        points.push({ ...point, ...perStep(point, REALISTIC_STEPS) });
      } finally {
        await target.stop();
      }
    }
    const [reference, herald] = points as [TurnsPoint & StepFigures, TurnsPoint & StepFigures];
    return { reference, herald };
  });
}

/** Appends `count` alternating user and assistant messages to each session of `chatPrefix`, in one statement per session. */
export async function seedSessions(databaseUrl: string, chatPrefix: string, count: number): Promise<void> {
  const db = createDb({ url: databaseUrl, maxConnections: 2 });
  try {
    const sessions = await db.selectFrom('sessions').select('id').where('chat_id', 'like', `${chatPrefix}-%`).execute();
    const messages = Array.from({ length: count }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `seeded message ${i}: what the person and the agent said earlier in this long conversation`,
    }));
    for (const { id } of sessions) await sql`SELECT herald_append_messages(${id}::uuid, NULL, ${JSON.stringify(messages)}::jsonb)`.execute(db);
  } finally {
    await db.destroy();
  }
}

export interface LongSessionPair {
  short: TurnsPoint & { at_message: number };
  long: TurnsPoint & { at_message: number };
}

/** The worker's transcript cache on (as deployed), then off (HERALD_TRANSCRIPT_CACHE_MESSAGES=0), in one run. */
export interface LongSessionResult {
  cached: LongSessionPair;
  uncached: LongSessionPair;
}

/**
 * Herald alone (the reference keeps no transcript): 16 sessions, one turn at a time each, an
 * instant model, three turns each after a warm-up of three: the short sessions measured at
 * messages 9-14, the long ones seeded to 1,000 messages first and measured at messages 1,007-1,012.
 */
async function longSessionPair(meters: Meters, env: Record<string, string>, progress: (message: string) => void): Promise<LongSessionPair> {
  const bench = new PipelineBench({ env });
  await bench.start();
  try {
    const scenario = (chatPrefix: string): Scenario => ({ workers: 1, concurrency: SESSIONS, clients: SESSIONS, modelLatencyMs: 0, durationMs: 60_000, turnsPerClient: 3, chatPrefix });
    const prefix = `long-${Date.now()}`;
    // The sessions exist after one turn; the seeding then follows their first two messages.
    for (const chats of [`${prefix}-s`, `${prefix}-l`]) await bench.run({ ...scenario(chats), turnsPerClient: 1 }, `${chats}-open`);
    progress(`seeding ${SESSIONS} sessions with ${LONG_SESSION_MESSAGES} messages`);
    await seedSessions(bench.databaseUrl, `${prefix}-l`, LONG_SESSION_MESSAGES - 2);
    progress('short sessions');
    const short = await measurePoint(bench, meters, scenario(`${prefix}-s`), 'short');
    progress('long sessions');
    const long = await measurePoint(bench, meters, scenario(`${prefix}-l`), 'long');
    return { short: { ...short.point, at_message: 12 }, long: { ...long.point, at_message: LONG_SESSION_MESSAGES + 10 } };
  } finally {
    await bench.stop();
  }
}

export async function runLongSessionBench(progress: (message: string) => void): Promise<LongSessionResult> {
  return withMeters(async (meters, env) => {
    progress('transcript cache on');
    const cached = await longSessionPair(meters, env, progress);
    progress('transcript cache off');
    const uncached = await longSessionPair(meters, { ...env, HERALD_TRANSCRIPT_CACHE_MESSAGES: '0' }, progress);
    return { cached, uncached };
  });
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

export function realisticMarkdown(result: RealisticResult): string {
  const rows = [result.reference, result.herald].map((p, i) => {
    const c = p.cpu_ms_per_step;
    return [
      i === 0 ? 'reference' : 'herald',
      p.turns,
      fmt(p.turns_per_s, 1),
      fmt(p.overhead_p50_ms_per_step),
      fmt(p.overhead_p99_ms_per_step),
      fmt(c.ingress),
      fmt(c.worker),
      fmt(c.postgres),
      fmt(c.redis),
      fmt(c.total),
      fmt(p.sql_per_step),
    ];
  });
  const ratio = result.herald.cpu_ms_per_step.total / result.reference.cpu_ms_per_step.total;
  return [
    `A turn of ${REALISTIC_STEPS} model steps (three \`todo\` calls, then the answer), 200 ms model, 1 worker, 8 sessions, 8 clients. Per step: the turn's figure divided by ${REALISTIC_STEPS}.\n`,
    table(['pipeline', 'turns', 'turns/s', 'overhead p50 ms/step', 'p99 ms/step', 'CPU ms/step ingress', 'worker', 'postgres', 'redis', 'total', 'SQL/step'], rows),
    `\nHerald's CPU per step against the reference's: ${fmt(ratio)}x (target <= 2x).`,
  ].join('\n');
}

export function longSessionMarkdown(result: LongSessionResult): string {
  const rows = (name: string, pair: LongSessionPair) =>
    [pair.short, pair.long].map((p) => {
      const c = p.cpu_ms_per_turn;
      return [name, `~${p.at_message}`, p.turns, fmt(p.overhead_p50_ms), fmt(p.overhead_p99_ms), fmt(c.ingress), fmt(c.worker), fmt(c.postgres), fmt(c.total), fmt(p.sql_per_turn)];
    });
  const ratios = (name: string, pair: LongSessionPair) =>
    `${name}: turn at message ~${pair.long.at_message} against ~${pair.short.at_message}: CPU ${fmt(pair.long.cpu_ms_per_turn.total / pair.short.cpu_ms_per_turn.total)}x (worker ${fmt(pair.long.cpu_ms_per_turn.worker / pair.short.cpu_ms_per_turn.worker)}x, postgres ${fmt(pair.long.cpu_ms_per_turn.postgres / pair.short.cpu_ms_per_turn.postgres)}x), statements ${fmt(pair.long.sql_per_turn / pair.short.sql_per_turn)}x (target <= 1.2x).`;
  return [
    `Herald, 1 worker, ${SESSIONS} sessions one turn at a time, instant model; the long sessions seeded to ${LONG_SESSION_MESSAGES} messages. Transcript cache on (as deployed), then off (HERALD_TRANSCRIPT_CACHE_MESSAGES=0).\n`,
    table(
      ['transcript cache', 'at message', 'turns', 'overhead p50 ms', 'p99 ms', 'CPU ms/turn ingress', 'worker', 'postgres', 'total', 'SQL/turn'],
      [...rows('on', result.cached), ...rows('off', result.uncached)],
    ),
    '',
    ratios('cache on', result.cached),
    ratios('cache off', result.uncached),
  ].join('\n');
}

/** Adds `key` to bench/results/turns.json, keeping what the turns run wrote there. */
export async function addToTurnsResults(key: 'realistic' | 'long_session', value: unknown): Promise<void> {
  const current = JSON.parse(await readFile(TURNS_RESULTS_FILE, 'utf8').catch(() => '{}')) as Record<string, unknown>;
  current[key] = { date: new Date().toISOString(), load_average: loadavg().map((n) => Number(n.toFixed(2))), ...(value as object) };
  await writeFile(TURNS_RESULTS_FILE, `${JSON.stringify(current, null, 2)}\n`);
}
