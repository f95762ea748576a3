import { assertSafeBind } from '@herald/core';
import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db, ProfileCache } from '@herald/db';
import { openDb, openProfileCache, prepareDatabase } from './role-wiring.ts';
import { startRoleHeartbeat, startRoleOpsServer } from './observability.ts';
import { startSummary } from './start-summary.ts';

// Each role's wiring is imported when that role runs: a process loads the service packages (and
// their SDKs: fastify, the model SDK, pg-boss's consumers) of its own roles only, which is most of
// the start time of a compiled role (docs/decisions/2026-12-02-role-startup.md).
const ingressRole = () => import('./ingress-role.ts');
const workerRole = () => import('./worker-role.ts');
const reviewerRole = () => import('./reviewer-role.ts');
const schedulerRole = () => import('./scheduler-role.ts');

/** What a long-running role needs from main: the config, its logger and a shutdown to register on. */
export interface RoleContext {
  config: Config;
  logger: Logger;
  newShutdown: () => Shutdown;
  /** Output for a person at a terminal (pretty logs, the start summary) rather than JSON lines. */
  pretty: boolean;
  /** The run mode's line (which mode runs and why), for the start summary. */
  modeLine: string | null;
}

/** `herald up`: every role in one process, migrations first. */
export async function runUp({ config, logger, newShutdown, pretty, modeLine }: RoleContext): Promise<void> {
  const started = performance.now();
  // Before anything starts: the ingress would refuse later, after the other roles came up.
  assertSafeBind(config);
  await prepareDatabase(config, logger);
  const shutdown = newShutdown();
  const db = openDb(config, logger, shutdown);
  const [{ startWorker }, { startReviewer }, { startScheduler }, { startIngress }] = await Promise.all([workerRole(), reviewerRole(), schedulerRole(), ingressRole()]);
  const profiles = await openProfileCache(config, logger, shutdown, db);
  await startWorker(config, logger, shutdown, db, profiles);
  await startReviewer(config, logger, shutdown, db);
  await startScheduler(config, logger, shutdown, db, profiles);
  const address = await startIngress(config, logger, shutdown, db, profiles);
  startRoleHeartbeat(config, logger, shutdown, ['ingress', 'worker', 'reviewer', 'scheduler']);
  if (!config.model.endpoint) logger.warn({}, 'no model configured (HERALD_MODEL); messages get a note on how to set one');
  const startMs = Math.round(performance.now() - started);
  if (pretty) {
    // At a terminal: the summary, once; the log line stays for LOG_LEVEL=debug.
    logger.debug({ address, startMs }, `Herald is up: API on ${address}`);
    process.stdout.write(startSummary(config, modeLine ?? '', address));
    return;
  }
  logger.info({ address, startMs }, `Herald is up: API on ${address}`);
  process.stderr.write(`Herald is up. API on ${address} — try: npx herald chat\n`);
}

export async function runIngressRole({ config, logger, newShutdown }: RoleContext): Promise<void> {
  const shutdown = newShutdown();
  const db = openDb(config, logger, shutdown);
  const { startIngress } = await ingressRole();
  const address = await startIngress(config, logger, shutdown, db, await openProfileCache(config, logger, shutdown, db));
  startRoleHeartbeat(config, logger, shutdown, ['ingress']);
  logger.info({ address }, `ingress listening on ${address}`);
}

type Start = (config: Config, logger: Logger, shutdown: Shutdown, db: Db) => Promise<unknown>;

/** A consumer role alone: the role, its ops server (health, metrics) and its heartbeat. */
async function runConsumerRole(context: RoleContext, role: string, start: Start): Promise<string> {
  const { config, logger } = context;
  const shutdown = context.newShutdown();
  const db = openDb(config, logger, shutdown);
  await start(config, logger, shutdown, db);
  const metrics = await startRoleOpsServer(config, logger, shutdown, db);
  startRoleHeartbeat(config, logger, shutdown, [role]);
  return metrics;
}

/** A role that fires hooks gets the process's profile cache (one LISTEN connection); the reviewer fires none. */
function withProfiles(start: (config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache) => Promise<unknown>): Start {
  return async (config, logger, shutdown, db) => start(config, logger, shutdown, db, await openProfileCache(config, logger, shutdown, db));
}

export async function runWorkerRole(context: RoleContext): Promise<void> {
  const metrics = await runConsumerRole(context, 'worker', withProfiles((await workerRole()).startWorker));
  context.logger.info({ concurrency: context.config.roles.worker.concurrency, metrics }, `worker started; metrics and health on ${metrics}`);
}

export async function runReviewerRole(context: RoleContext): Promise<void> {
  const metrics = await runConsumerRole(context, 'reviewer', (await reviewerRole()).startReviewer);
  context.logger.info({ concurrency: context.config.roles.reviewer.concurrency, metrics }, `reviewer started; metrics and health on ${metrics}`);
}

export async function runSchedulerRole(context: RoleContext): Promise<void> {
  const metrics = await runConsumerRole(context, 'scheduler', withProfiles((await schedulerRole()).startScheduler));
  context.logger.info({ intervalMs: context.config.roles.reconcileIntervalMs, metrics }, `scheduler started; metrics and health on ${metrics}`);
}
