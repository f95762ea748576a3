/**
 * Where a Herald turn's Postgres time goes: one ingress and one worker under `clients` closed-loop
 * clients for BENCH_SECONDS, with pg_stat_statements counting every statement, nested ones inside
 * the SQL functions included (track = all), and track_functions timing each function. Prints the
 * statements and functions by total time per answered turn.
 *
 * Needs pg_stat_statements in shared_preload_libraries of the local Postgres (a restart); this
 * script sets `pg_stat_statements.track` and `track_functions` for the run and puts them back.
 * `npx tsx bench/turns/pg-profile.ts [clients] [realistic]` after `npm run build`; `realistic`: turns of
 * four model steps, three `todo` calls and the answer (issue 41 point 5).
 */
import pg from 'pg';
import { PipelineBench } from '../pipeline-bench.ts';
import { PrivateRedis } from './counters.ts';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin<T extends pg.QueryResultRow>(text: string, values: unknown[] = [], url = ADMIN_URL): Promise<T[]> {
  const withUser = new URL(url);
  // The test databases' URLs name no user (the roles take the process's); this connects as the superuser.
  if (!withUser.username) withUser.username = 'postgres';
  const client = new pg.Client({ connectionString: withUser.toString() });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function setTracking(on: boolean): Promise<void> {
  await admin(`ALTER SYSTEM SET pg_stat_statements.track = '${on ? 'all' : 'none'}'`);
  await admin(`ALTER SYSTEM SET track_functions = '${on ? 'pl' : 'none'}'`);
  // Planning too: a statement inside a plpgsql function whose plan is not cached is planned every call.
  await admin(`ALTER SYSTEM SET pg_stat_statements.track_planning = ${on ? 'on' : 'off'}`);
  await admin('SELECT pg_reload_conf()');
}

interface StatementRow {
  calls: string;
  total_ms: number;
  plan_ms: number;
  wal_bytes: string;
  query: string;
}

async function report(databaseUrl: string, turns: number): Promise<void> {
  const database = new URL(databaseUrl).pathname.slice(1);
  const statements = await admin<StatementRow>(
    `SELECT s.calls::text, s.total_exec_time + s.total_plan_time AS total_ms, s.total_plan_time AS plan_ms, s.wal_bytes::text, regexp_replace(s.query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 ORDER BY total_ms DESC LIMIT 40`,
    [database],
  );
  const [top] = await admin<{ total_ms: number; plan_ms: number; calls: string }>(
    `SELECT coalesce(sum(s.total_exec_time + s.total_plan_time), 0) AS total_ms, coalesce(sum(s.total_plan_time), 0) AS plan_ms, coalesce(sum(s.calls), 0)::text AS calls
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND s.toplevel`,
    [database],
  );
  // The statements the roles sent, each counted once: what Postgres spent executing and planning them.
  if (top)
    console.log(
      `\nStatements the roles sent: ${(top.total_ms / turns).toFixed(3)} ms per turn (${(top.plan_ms / turns).toFixed(3)} of it planning), ${(Number(top.calls) / turns).toFixed(2)} per turn`,
    );
  console.log(`\n${turns} turns. Statements by total time, planning included (nested too, so a function's callees are counted again inside it), per turn:`);
  for (const s of statements) {
    const wal = `${(Number(s.wal_bytes) / turns).toFixed(0).padStart(6)} B WAL`;
    const plan = `${(s.plan_ms / turns).toFixed(3).padStart(6)} plan`;
    console.log(`${(s.total_ms / turns).toFixed(3).padStart(8)} ms ${plan}  ${(Number(s.calls) / turns).toFixed(2).padStart(6)} calls ${wal}  ${s.query.slice(0, 130)}`);
  }
  const functions = await admin<{ funcname: string; calls: string; total_time: number; self_time: number }>(
    'SELECT funcname, calls::text, total_time, self_time FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT 30',
    [],
    databaseUrl,
  );
  console.log('\nFunctions by self time, per turn (ms total / ms self / calls):');
  for (const f of functions)
    console.log(`${(f.total_time / turns).toFixed(3).padStart(8)} ${(f.self_time / turns).toFixed(3).padStart(8)} ${(Number(f.calls) / turns).toFixed(2).padStart(6)}  ${f.funcname}`);
}

async function main(): Promise<void> {
  const clients = Number(process.argv[2] ?? 1);
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  await admin('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const redis = await PrivateRedis.start();
  const bench = new PipelineBench({ env: { REDIS_URL: redis.url } });
  await bench.start();
  try {
    const chatPrefix = `pgprofile-${Date.now()}`;
    const steps = process.argv.includes('realistic') ? 4 : 1;
    await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: 1000, turnsPerClient: 1, chatPrefix }, 'open');
    await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: 1000, chatPrefix, steps }, 'warm');
    await setTracking(true);
    await admin('SELECT pg_stat_statements_reset()');
    await admin('SELECT pg_stat_reset()', [], bench.databaseUrl);
    const [walBefore] = await admin<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const result = await bench.run({ workers: 1, concurrency: 64, clients, modelLatencyMs: 0, durationMs: seconds * 1000, chatPrefix, steps }, 'profile');
    const [wal] = await admin<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS bytes', [walBefore?.lsn]);
    console.log(`WAL written by the whole cluster during the run: ${(Number(wal?.bytes) / result.turns).toFixed(0)} bytes per turn`);
    await report(bench.databaseUrl, result.turns);
  } finally {
    await setTracking(false);
    await bench.stop();
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
