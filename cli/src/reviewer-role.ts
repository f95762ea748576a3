import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db } from '@herald/db';
import { builtinRegistry } from '@herald/tools';
import { ReviewerService } from '@herald/reviewer';
import { localModelWiring, providerFromConfig } from './provider-wiring.ts';
import { pricesFromConfig } from './prices-wiring.ts';
import { loadToolPlugins } from './role-wiring.ts';

export async function startReviewer(config: Config, logger: Logger, shutdown: Shutdown, db: Db): Promise<ReviewerService> {
  const log = logger.child({ component: 'reviewer' });
  // Reviews are priced like turns: a bad price file stops the reviewer as it stops a worker.
  const prices = pricesFromConfig(config);
  // The reviewer executes only memory and skill tools, but it loads the plugins too, so a review
  // of a session that offered plugin tools refuses them by name rather than as unknown.
  // It never runs terminal or file tools, so it opens no sandbox: they are registered, not offered.
  const registry = builtinRegistry(config.tools);
  await loadToolPlugins(registry, config.tools.plugins);
  // Reviews are background work retried by pg-boss: resting keys are tracked here, not shared.
  const provider = providerFromConfig(localModelWiring(config, config.environment, log));
  const reviewer = new ReviewerService({ config, db, provider, registry, logger: log, prices });
  await reviewer.start();
  shutdown.add('reviewer', () => reviewer.close(Math.max(0, config.roles.shutdownTimeoutMs - 5000)));
  return reviewer;
}
