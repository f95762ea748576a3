import { assertSafeBind } from '@herald/core';
import type { Config, Logger, Shutdown } from '@herald/core';
import { createProvider, PastSessionsRecall } from '@herald/agent';
import type { Provider } from '@herald/agent';
import { createDb, ensureDatabase, migrate, ProfileCache } from '@herald/db';
import { applyPolicies, prepareJobs } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';
import { reviewQueues } from '@herald/knowledge';
import { cronQueues } from '@herald/cron';
import type { Db } from '@herald/db';
import { openQueueTransport, TurnDoneListener } from '@herald/queue';
import type { QueueTransport } from '@herald/queue';
import { queueSettings } from './queue-settings.ts';

export { queueSettings };
export { startEmbeddedPostgres } from './embedded-postgres.ts';
export type { EmbeddedPostgres } from './embedded-postgres.ts';
import { builtinRegistry, openSandbox, ToolExposure } from '@herald/tools';
import { childProviderFromConfig, registerDelegation } from './delegation-wiring.ts';
import type { SandboxChoice, Tool, ToolRegistry } from '@herald/tools';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createIngressServer } from '@herald/ingress';
import { SessionLifecycle, WorkerService } from '@herald/worker';
import { CHAT_PLATFORMS } from '@herald/delivery';
import { ReviewerService } from '@herald/reviewer';
import { CronService, Reconciler, WebhookSender } from '@herald/scheduler';
import { startDelivery, startPlatformIngress } from './platform-roles.ts';
import { loadHooks, sandboxCommands } from './hook-wiring.ts';
import { hookQueues } from '@herald/hooks';
import { HookDeliveryService, HookEventService } from '@herald/scheduler';
import { watchQueues } from './observability.ts';

export async function prepareDatabase(config: Config, logger: Logger): Promise<void> {
  const created = await ensureDatabase(config.database.url);
  if (created === 'created') logger.info({}, 'created the database');
  const result = await migrate(config.database.url, {
    onApply: (name) => logger.info({ migration: name }, 'applied migration'),
  });
  logger.info({ applied: result.applied.length, alreadyApplied: result.alreadyApplied }, 'migrations up to date');
  const db = createDb({ url: config.database.url, maxConnections: 1 });
  try {
    await prepareJobs(db, jobQueues(config));
  } finally {
    await db.destroy();
  }
  logger.info({}, 'pg-boss schema and job queues up to date');
}

/** Every pg-boss queue Herald sends to, with its policy from the config. */
export function jobQueues(config: Config): QueueSpec[] {
  return [...reviewQueues(config.roles.reviewer), ...cronQueues(), ...hookQueues()];
}

export function openDb(config: Config, logger: Logger, shutdown: Shutdown): Db {
  const db = createDb({
    url: config.database.url,
    maxConnections: config.database.poolSize,
    onError: (error) => logger.warn({ err: error }, 'idle Postgres connection failed; the pool reconnects'),
  });
  shutdown.add('postgres', () => db.destroy());
  return db;
}

/**
 * The process's one profile cache (stored hooks and reset rules, docs/decisions/2026-12-02-profile-cache.md),
 * shared by its roles, on its own LISTEN connection; stopped at shutdown before the pool closes.
 * Resolves once the listener connected or failed its first attempt: until then it reads through.
 */
export async function openProfileCache(config: Config, logger: Logger, shutdown: Shutdown, db: Db): Promise<ProfileCache> {
  const profiles = new ProfileCache({
    db,
    url: config.database.url,
    onError: (error) => logger.warn({ err: error }, 'profile cache listener down; profiles are read from Postgres until it is back'),
  });
  await profiles.start();
  shutdown.add('profile cache', () => profiles.stop());
  return profiles;
}

/**
 * The run queue's store for one role (Redis, or Postgres in HERALD_QUEUE=postgres), closed at
 * shutdown after the queues and workers made from it, which were registered later.
 */
export function openTransport(config: Config, log: Logger, shutdown: Shutdown, role: string): QueueTransport {
  const transport = openQueueTransport(queueSettings(config), (error) => log.warn({ err: error }, 'queue store connection error'));
  shutdown.add(`${role} queue store`, () => transport.close());
  return transport;
}

export function providerFromConfig(config: Config): Provider | null {
  if (!config.model.endpoint) return null;
  return createProvider({
    provider: config.model.endpoint.provider,
    model: config.model.endpoint.model,
    // Local OpenAI-compatible servers ignore the key, but the SDK insists on one.
    apiKey: config.model.endpoint.apiKey ?? 'unused',
    baseURL: config.model.endpoint.baseURL,
    timeoutMs: config.model.timeoutMs,
  });
}

/** The model that writes compression summaries: HERALD_SUMMARY_MODEL, else the main model. */
export function summariserFromConfig(config: Config): Provider | null {
  const summary = config.compression.summaryModel;
  if (!summary) return providerFromConfig(config);
  return createProvider({
    provider: summary.provider,
    model: summary.model,
    apiKey: summary.apiKey ?? 'unused',
    baseURL: summary.baseURL,
    timeoutMs: config.model.timeoutMs,
  });
}

export async function startIngress(config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache): Promise<string> {
  assertSafeBind(config);
  const log = logger.child({ component: 'ingress' });
  const transport = openTransport(config, log, shutdown, 'ingress');
  const queue = transport.createRunQueue();
  queue.on('error', (error) => log.warn({ err: error }, 'run queue error'));
  shutdown.add('run queue', () => queue.close());
  // Reviews are pg-boss jobs in Postgres (GET /v1/admin/jobs lists them): only the run queue is BullMQ's.
  watchQueues(db, [queue], shutdown);
  const hooks = await loadHooks(config, log, db, profiles, sandboxCommands(() => openToolSandbox(config, log)));
  const listener = new TurnDoneListener(transport.bus, config.redis.queuePrefix);
  await listener.start();
  const platforms = await startPlatformIngress(config, log, shutdown, db, queue, transport.bus, hooks, profiles);
  const app = createIngressServer({
    config,
    db,
    queue,
    adminQueues: [queue],
    notices: transport.bus,
    listener,
    logger: log,
    telegram: platforms.telegram,
    hooks,
    profiles,
  });
  const address = await app.listen({ host: config.api.host, port: config.api.port });
  shutdown.add('http server', () => app.close());
  return address;
}

/**
 * Plugin tools: each module in HERALD_TOOL_PLUGINS exports `tools`, an array of tools built with
 * `defineTool` (the same shape, schema and replay-safety declaration as the built-ins).
 */
export async function loadToolPlugins(registry: ToolRegistry, paths: readonly string[]): Promise<string[]> {
  const names: string[] = [];
  for (const path of paths) {
    const url = /^[a-z]+:/.test(path) ? path : pathToFileURL(resolve(path)).href;
    const module = (await import(url)) as { tools?: unknown };
    if (!Array.isArray(module.tools)) throw new Error(`HERALD_TOOL_PLUGINS: ${path} does not export an array named tools`);
    for (const tool of module.tools as Tool[]) {
      registry.register(tool);
      names.push(tool.name);
    }
  }
  return names;
}

/**
 * The sandbox terminal and file tools run in. One line at start when there is none (how to get
 * it) or when it is switched off (that tools run unconfined), every time the worker starts.
 */
export async function openToolSandbox(config: Config, log: Logger): Promise<SandboxChoice> {
  const choice = await openSandbox({ settings: config.tools.sandbox, env: process.env });
  if (choice.sandbox === null) log.warn({ sandbox: 'unavailable' }, choice.notice);
  else if (choice.notice !== null) log.warn({ sandbox: choice.sandbox.kind }, choice.notice);
  else log.info({ sandbox: choice.sandbox.kind, network: config.tools.sandbox.networkToolsets }, 'terminal and file tools run in a bubblewrap sandbox');
  return choice;
}

export async function startWorker(config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache): Promise<WorkerService> {
  const log = logger.child({ component: 'worker' });
  const transport = openTransport(config, log, shutdown, 'worker');
  // Cron reports to webhooks go through the same outbox consumer as chat replies.
  const delivery = await startDelivery(config, log, shutdown, db, new Map([['webhook', new WebhookSender({ allowlist: config.tools.webAllowlist })]]));
  const toolSandbox = await openToolSandbox(config, log);
  const registry = builtinRegistry({ ...config.tools, toolSandbox });
  const hooks = await loadHooks(config, log, db, profiles, sandboxCommands(() => Promise.resolve(toolSandbox)));
  const pluginTools = await loadToolPlugins(registry, config.tools.plugins);
  const queue = registerDelegation(config, registry, transport, db, log, shutdown);
  // The worker sends review and cron-finish jobs: their queues carry this config's policy.
  await applyPolicies(db, jobQueues(config));
  const worker = new WorkerService({
    config,
    db,
    transport,
    provider: providerFromConfig(config),
    summariser: summariserFromConfig(config),
    registry,
    // Availability checks read the worker's environment: a tool needing a missing key is not offered.
    exposure: new ToolExposure(registry, { pluginTools, env: process.env }),
    logger: log,
    recall: config.roles.worker.recall === 'past-sessions' ? new PastSessionsRecall(db) : null,
    onSessionActive: delivery.onSessionActive,
    hooks,
    queue,
    childProvider: childProviderFromConfig(config),
  });
  await worker.start();
  // Leave a few seconds of the deadline for the steps after it.
  shutdown.add('worker', () => worker.close(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  // Handoffs and on_session_end hooks: the worker has the platforms' senders and the hooks.
  const livePlatforms = new Set(CHAT_PLATFORMS.filter((platform) => config.platforms[platform] !== null));
  const lifecycle = new SessionLifecycle({ db, logger: log.child({ component: 'lifecycle' }), owner: worker.owner, livePlatforms, hooks });
  lifecycle.start();
  shutdown.add('session lifecycle', () => lifecycle.stop());
  return worker;
}

export async function startScheduler(config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache): Promise<Reconciler> {
  const log = logger.child({ component: 'scheduler' });
  // Loaded first, so a bad HERALD_HOOKS_FILE stops the start before any work is taken.
  const hooks = await loadHooks(config, log, db, profiles, sandboxCommands(() => openToolSandbox(config, log)));
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
  const hookDelivery = new HookDeliveryService({ db, logger: log.child({ component: 'hooks' }), secret: config.hooks.secret, allowlist: config.tools.webAllowlist, tickMs: config.roles.scheduler.tickMs });
  await hookDelivery.start();
  shutdown.add('hook deliveries', () => hookDelivery.stop(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  // cron_fire and delivery_failed: the scheduler fires the hooks of events written by other roles' transactions.
  const hookEvents = new HookEventService({ db, hooks, logger: log.child({ component: 'hooks' }), tickMs: config.roles.scheduler.tickMs });
  hookEvents.start();
  shutdown.add('hook events', () => hookEvents.stop());
  return reconciler;
}

export async function startReviewer(config: Config, logger: Logger, shutdown: Shutdown, db: Db): Promise<ReviewerService> {
  const log = logger.child({ component: 'reviewer' });
  // The reviewer executes only memory and skill tools, but it loads the plugins too, so a review
  // of a session that offered plugin tools refuses them by name rather than as unknown.
  // It never runs terminal or file tools, so it opens no sandbox: they are registered, not offered.
  const registry = builtinRegistry(config.tools);
  await loadToolPlugins(registry, config.tools.plugins);
  const reviewer = new ReviewerService({ config, db, provider: providerFromConfig(config), registry, logger: log });
  await reviewer.start();
  shutdown.add('reviewer', () => reviewer.close(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  return reviewer;
}
