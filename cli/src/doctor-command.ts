import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { silentLogger } from '@herald/core';
import type { Config } from '@herald/core';
import { withDefaultUser } from '@herald/db';
import { RedisNoticeBus } from '@herald/queue';
import { postgresBinaries } from './postgres-binaries.ts';
import { embeddedPaths, runningServer, serverRunAs } from './embedded-postgres.ts';
import { localPostgresAnswers, modeLine, settleModes } from './run-mode.ts';

/** The extensions Herald's migrations create (history search's indexes). */
const EXTENSIONS = ['pg_trgm', 'btree_gin'] as const;

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

async function checkPostgres(url: string): Promise<Check> {
  const client = new pg.Client({ connectionString: withDefaultUser(url), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
    const available = await client.query<{ name: string }>('SELECT name FROM pg_available_extensions WHERE name = ANY($1)', [EXTENSIONS]);
    const missing = EXTENSIONS.filter((name) => !available.rows.some((row) => row.name === name));
    if (missing.length > 0) return { name: 'postgres', ok: false, detail: `Postgres ${version} answers but lacks ${missing.join(', ')} (install its contrib package)` };
    return { name: 'postgres', ok: true, detail: `Postgres ${version} answers, ${EXTENSIONS.join(' and ')} available` };
  } catch (error) {
    return { name: 'postgres', ok: false, detail: `does not answer: ${(error as Error).message}` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The embedded server's programs and the extensions' libraries ship in the npm package. */
async function checkEmbeddedBinaries(): Promise<Check> {
  try {
    const { postgres } = await postgresBinaries();
    const lib = join(dirname(dirname(postgres)), 'lib', 'postgresql');
    const missing = EXTENSIONS.filter((name) => !existsSync(join(lib, `${name}.so`)));
    if (!existsSync(postgres)) return { name: 'embedded binaries', ok: false, detail: `${postgres} is missing: run npm ci` };
    if (missing.length > 0) return { name: 'embedded binaries', ok: false, detail: `${missing.join(', ')} missing from ${lib}` };
    return { name: 'embedded binaries', ok: true, detail: `${postgres} with ${EXTENSIONS.join(' and ')}` };
  } catch (error) {
    return { name: 'embedded binaries', ok: false, detail: `not installed for this platform: ${(error as Error).message}` };
  }
}

async function checkRedis(url: string): Promise<Check> {
  const bus = new RedisNoticeBus(url);
  try {
    await bus.ping(3000);
    return { name: 'redis', ok: true, detail: 'answers' };
  } catch (error) {
    return { name: 'redis', ok: false, detail: `does not answer: ${(error as Error).message}` };
  } finally {
    await bus.close();
  }
}

/** cli/bin/node-check.js has already refused an unsupported Node before this runs. */
function checkNode(): Check {
  return { name: 'node', ok: true, detail: process.versions.node };
}

/** How `herald up` would run the embedded server here (as root: which account, or a user namespace). */
async function embeddedPlan(dataDir: string): Promise<{ check: Check; note?: string }> {
  try {
    const runAs = await serverRunAs(embeddedPaths(resolve(dataDir)).cluster, silentLogger, false);
    if (runAs.kind === 'namespace') return { note: runAs.note, check: { name: 'embedded server user', ok: true, detail: runAs.note } };
    const detail = runAs.kind === 'account' ? `runs as the unprivileged user ${runAs.account.name}` : 'runs as this user';
    return { check: { name: 'embedded server user', ok: true, detail } };
  } catch (error) {
    return { check: { name: 'embedded server user', ok: false, detail: (error as Error).message } };
  }
}

/**
 * `herald doctor`: the mode line `herald up` prints, then whether each service answers. Starts
 * nothing: in embedded mode it checks the packaged server and joins it only if it is running.
 */
export async function runDoctor(config: Config): Promise<number> {
  const modes = settleModes(config);
  const checks: Check[] = [checkNode()];
  let note: string | undefined;
  if (modes.database === 'embedded') {
    const plan = await embeddedPlan(config.database.dataDir);
    note = plan.note;
    checks.push(await checkEmbeddedBinaries(), plan.check);
  }
  process.stdout.write(`${modeLine(config, modes, await localPostgresAnswers(), note)}\n`);
  if (modes.database === 'embedded') {
    const running = await runningServer(embeddedPaths(config.database.dataDir).cluster);
    if (running) checks.push({ name: 'embedded postgres', ok: true, detail: `running (pid ${running.pid}, port ${running.port})` });
    else checks.push({ name: 'embedded postgres', ok: true, detail: 'not running; herald up starts it' });
  } else {
    checks.push(await checkPostgres(config.database.url));
  }
  if (modes.queue === 'redis') checks.push(await checkRedis(config.redis.url));
  else checks.push({ name: 'queue', ok: true, detail: 'on Postgres (BullMQ Postgres backend, LISTEN/NOTIFY): nothing else to run' });
  for (const check of checks) process.stdout.write(`${check.ok ? 'ok  ' : 'FAIL'}  ${check.name}: ${check.detail}\n`);
  return checks.every((check) => check.ok) ? 0 : 1;
}
