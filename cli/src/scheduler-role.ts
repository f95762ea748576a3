import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db, ProfileCache } from '@herald/db';
import { CronService, HookDeliveryService, HookEventService, Reconciler } from '@herald/scheduler';
import { loadHooks, sandboxCommands } from './hook-wiring.ts';
import { watchQueues } from './observability.ts';
import { openToolSandbox, openTransport } from './role-wiring.ts';

export async function startScheduler(config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache): Promise<Reconciler> {
  const log = logger.child({ component: 'scheduler' });
  // Loaded first, so a bad HERALD_HOOKS_FILE stops the start before any work is taken.
  const hooks = await loadHooks(
    config,
    log,
    db,
    profiles,
    sandboxCommands(() => openToolSandbox(config, log)),
  );
  const transport = openTransport(config, log, shutdown, 'scheduler');
  const queue = transport.createRunQueue();
  queue.on('error', (error) => log.warn({ err: error }, 'run queue error'));
  shutdown.add('scheduler queue', () => queue.close());
  watchQueues(db, [queue], shutdown);
  const reconciler = new Reconciler({
    db,
    queue,
    logger: log,
    intervalMs: config.roles.reconcileIntervalMs,
    graceMs: Math.min(2000, config.roles.reconcileIntervalMs),
    auditRetentionDays: config.hooks.auditRetentionDays,
  });
  reconciler.start();
  shutdown.add('reconciler', () => reconciler.stop());
  const cron = new CronService({
    db,
    queue,
    logger: log.child({ component: 'cron' }),
    tickMs: config.roles.scheduler.tickMs,
    sweepIntervalMs: config.roles.reconcileIntervalMs,
    maxFailures: config.roles.scheduler.cronMaxFailures,
  });
  await cron.start();
  shutdown.add('cron', () => cron.stop(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  const hookDelivery = new HookDeliveryService({
    db,
    logger: log.child({ component: 'hooks' }),
    secret: config.hooks.secret,
    allowlist: config.tools.webAllowlist,
    tickMs: config.roles.scheduler.tickMs,
  });
  await hookDelivery.start();
  shutdown.add('hook deliveries', () => hookDelivery.stop(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  // cron_fire and delivery_failed: the scheduler fires the hooks of events written by other roles' transactions.
  const hookEvents = new HookEventService({ db, hooks, logger: log.child({ component: 'hooks' }), tickMs: config.roles.scheduler.tickMs });
  hookEvents.start();
  shutdown.add('hook events', () => hookEvents.stop());
  return reconciler;
}
