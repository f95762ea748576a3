// What the roles share: the database, the queue store, the tool sandbox and plugins. The service
// packages are imported by each role's own module (ingress-role.ts, worker-role.ts, ...), so a
// process loads only the roles it runs (docs/decisions/2026-12-02-role-startup.md).
import type { Config, Logger, Shutdown } from '@herald/core';
import { createDb, ensureDatabase, migrate, ProfileCache, ReadRouting } from '@herald/db';
import type { Db } from '@herald/db';
import { prepareJobs } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';
import { findInjection, loadBuiltinSkills, reviewQueues, seedBuiltinSkills } from '@herald/knowledge';
import { cronQueues } from '@herald/cron';
import { hookQueues } from '@herald/hooks';
import { openQueueTransport } from '@herald/queue';
import type { QueueTransport } from '@herald/queue';
import { openSandbox } from '@herald/tools';
import type { SandboxChoice, Tool, ToolRegistry } from '@herald/tools';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { queueSettings } from './queue-settings.ts';

/** `seedSkills: false`: a restore, whose backup holds the skills (and their audit rows) already. */
export async function prepareDatabase(config: Config, logger: Logger, options: { seedSkills?: boolean } = {}): Promise<void> {
  const created = await ensureDatabase(config.database.url);
  if (created === 'created') logger.info({}, 'created the database');
  // One line for all of them: each migration's name is there at LOG_LEVEL=debug.
  const result = await migrate(config.database.url, {
    onApply: (name) => logger.debug({ migration: name }, 'applied migration'),
  });
  logger.info({ applied: result.applied.length, alreadyApplied: result.alreadyApplied }, `migrations up to date (${result.applied.length} applied now, ${result.alreadyApplied} before)`);
  const db = createDb({ url: config.database.url, maxConnections: 1 });
  try {
    await prepareJobs(db, jobQueues(config));
    // Herald's own skills into every profile: added, updated unless edited, never re-added once removed.
    if (options.seedSkills !== false) logger.info(await seedBuiltinSkills(db, await loadBuiltinSkills()), 'built-in skills seeded');
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
    // Once shutting down, the embedded Postgres stopping under an idle connection is expected, not news.
    onError: (error) => (shutdown.started ? undefined : logger.warn({ err: error }, 'idle Postgres connection failed; the pool reconnects')),
  });
  shutdown.add('postgres', () => db.destroy());
  return db;
}

/**
 * Where the ingress's lag-tolerant reads go: a pool on DATABASE_READ_URL when it is set (the same
 * size as the primary's), else the primary (docs/decisions/2026-12-06-read-replica.md).
 */
export function openReadRouting(config: Config, logger: Logger, shutdown: Shutdown, db: Db): ReadRouting {
  const readUrl = config.database.readUrl;
  if (readUrl === undefined) return new ReadRouting(db);
  const replica = createDb({
    url: readUrl,
    maxConnections: config.database.poolSize,
    onError: (error) => (shutdown.started ? undefined : logger.warn({ err: error }, 'idle replica connection failed; the pool reconnects')),
  });
  shutdown.add('postgres replica', () => replica.destroy());
  return new ReadRouting(db, replica);
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

/**
 * A tool's description and guidance sit in every prompt that offers it: scanned like any prompt
 * text, and a plugin whose text reads like an injection stops the worker at start, naming it.
 */
function checkToolText(path: string, tool: Tool): void {
  for (const [field, text] of [
    ['description', tool.description],
    ['guidance', tool.guidance],
  ] as const) {
    const found = typeof text === 'string' ? findInjection(text, 'prompt') : undefined;
    if (found !== undefined) throw new Error(`HERALD_TOOL_PLUGINS: ${path}: tool ${tool.name}: the ${field} was refused by the injection scan (${found.reason}, line ${found.line})`);
  }
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
      checkToolText(path, tool);
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
  const choice = await openSandbox({ settings: config.tools.sandbox, env: process.env, workspaceRoot: config.tools.workspaceRoot });
  if (choice.sandbox === null) log.warn({ sandbox: 'unavailable' }, choice.notice);
  else if (choice.notice !== null) log.warn({ sandbox: choice.sandbox.kind }, choice.notice);
  else {
    const { sandbox } = choice;
    const user = sandbox.user === undefined ? {} : { uid: sandbox.user.uid, gid: sandbox.user.gid };
    log.info({ sandbox: sandbox.kind, ...user, network: config.tools.sandbox.networkToolsets }, 'terminal and file tools run in a bubblewrap sandbox');
  }
  return choice;
}
