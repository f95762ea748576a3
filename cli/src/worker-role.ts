import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db, ProfileCache } from '@herald/db';
import { applyPolicies } from '@herald/jobs';
import { PastSessionsRecall } from '@herald/agent';
import { BrowserSessions, ToolExposure } from '@herald/tools';
import { CHAT_PLATFORMS } from '@herald/core';
import { SessionLifecycle, WorkerService } from '@herald/worker';
import { WebhookSender } from '@herald/scheduler';
import { openDelegationQueue } from './delegation-wiring.ts';
import { openMcpTools } from './mcp-wiring.ts';
import { openBackgroundProcesses } from './process-wiring.ts';
import { loadHooks, sandboxCommands } from './hook-wiring.ts';
import { startDelivery } from './platform-roles.ts';
import { childProviderFromConfig, modelWiring, providerFromConfig, sharedCooldowns, summariserFromConfig } from './provider-wiring.ts';
import { ProfileModelCache } from './profile-model-wiring.ts';
import { pricesFromConfig } from './prices-wiring.ts';
import { jobQueues, openToolSandbox, openTransport } from './role-wiring.ts';
import { buildToolRegistry } from './tool-registry.ts';

export async function startWorker(config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache): Promise<WorkerService> {
  const log = logger.child({ component: 'worker' });
  const transport = openTransport(config, log, shutdown, 'worker');
  const prices = pricesFromConfig(config);
  const models = modelWiring(config, config.environment, await sharedCooldowns(config, db, transport.bus, log), log);
  // Cron reports to webhooks go through the same outbox consumer as chat replies.
  const delivery = await startDelivery(config, log, shutdown, db, new Map([['webhook', new WebhookSender({ allowlist: config.tools.webAllowlist })]]));
  const toolSandbox = await openToolSandbox(config, log);
  const hooks = await loadHooks(
    config,
    log,
    db,
    profiles,
    sandboxCommands(() => Promise.resolve(toolSandbox)),
  );
  const { queue, wake } = openDelegationQueue(transport, db, log, shutdown);
  // A process's exit is posted to its session and woken on the same run queue.
  const backgroundProcesses = openBackgroundProcesses(config, db, log, () => queue);
  const browser = new BrowserSessions({ chromiumPath: config.tools.chromiumPath, idleMs: config.tools.browserIdleMs, allowlist: config.tools.webAllowlist });
  shutdown.add('browser', () => browser.closeAll());
  const { registry, pluginTools } = await buildToolRegistry(config, toolSandbox, wake, { backgroundProcesses, browser });
  const mcp = await openMcpTools(config, db, toolSandbox, log.child({ component: 'mcp' }));
  // Disposers run in reverse: the servers stop after the worker's turns have ended.
  shutdown.add('mcp servers', () => mcp.close());
  // Shutdown runs in reverse: after the worker's turns end, before the queue and Postgres close.
  shutdown.add('background processes', () => backgroundProcesses.stopAll());
  // The worker sends review and cron-finish jobs: their queues carry this config's policy.
  await applyPolicies(db, jobQueues(config));
  const worker = new WorkerService({
    config,
    db,
    transport,
    provider: providerFromConfig(models),
    summariser: summariserFromConfig(models),
    registry,
    // Availability checks read the worker's environment: a tool needing a missing key is not offered.
    exposure: new ToolExposure(registry, { pluginTools, env: process.env }),
    logger: log,
    recall: config.roles.worker.recall === 'past-sessions' ? new PastSessionsRecall(db) : null,
    onSessionActive: delivery.onSessionActive,
    drafts: delivery.drafts,
    hooks,
    queue,
    childProvider: childProviderFromConfig(models),
    mcp,
    profileModels: new ProfileModelCache(models, profiles),
    prices,
    profiles,
  });
  await worker.start();
  // Leave a few seconds of the deadline for the steps after it.
  shutdown.add('worker', () => worker.close(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  // Handoffs and on_session_end hooks: the worker has the platforms' senders and the hooks.
  const livePlatforms = new Set(CHAT_PLATFORMS.filter((platform) => config.platforms.accounts[platform].length > 0));
  const lifecycle = new SessionLifecycle({ db, logger: log.child({ component: 'lifecycle' }), owner: worker.owner, livePlatforms, hooks });
  lifecycle.start();
  shutdown.add('session lifecycle', () => lifecycle.stop());
  return worker;
}
