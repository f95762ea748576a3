import { assertSafeBind } from '@herald/core';
import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db, ProfileCache } from '@herald/db';
import { TurnDoneListener, TurnStreamListener } from '@herald/queue';
import { closeIngressServer, createIngressServer } from '@herald/ingress';
import { providerNamesFromConfig } from './provider-names.ts';
import { loadHooks, sandboxCommands } from './hook-wiring.ts';
import { watchQueues } from './observability.ts';
import { startPlatformIngress } from './platform-roles.ts';
import { openReadRouting, openToolSandbox, openTransport } from './role-wiring.ts';

/** `checks.responses`: every JSON answer is held to its route's contract (the test stack turns it on). */
export async function startIngress(config: Config, logger: Logger, shutdown: Shutdown, db: Db, profiles: ProfileCache, checks: { responses?: boolean } = {}): Promise<string> {
  assertSafeBind(config);
  const log = logger.child({ component: 'ingress' });
  const transport = openTransport(config, log, shutdown, 'ingress');
  const queue = transport.createRunQueue();
  queue.on('error', (error) => log.warn({ err: error }, 'run queue error'));
  shutdown.add('run queue', () => queue.close());
  // Reviews are pg-boss jobs in Postgres (GET /v1/admin/jobs lists them): only the run queue is BullMQ's.
  watchQueues(db, [queue], shutdown);
  const hooks = await loadHooks(
    config,
    log,
    db,
    profiles,
    sandboxCommands(() => openToolSandbox(config, log)),
  );
  const listener = new TurnDoneListener(transport.bus, config.redis.queuePrefix);
  await listener.start();
  const streamListener = new TurnStreamListener(transport.bus, config.redis.queuePrefix);
  await streamListener.start();
  const reads = openReadRouting(config, log, shutdown, db);
  const platforms = await startPlatformIngress(config, log, shutdown, db, queue, transport.bus, hooks, profiles);
  const app = createIngressServer({
    config,
    db,
    queue,
    adminQueues: [queue],
    notices: transport.bus,
    listener,
    turnStream: { store: transport.stream, listener: streamListener },
    logger: log,
    platformWebhooks: platforms.webhooks,
    hooks,
    profiles,
    reads,
    checkResponses: checks.responses,
    providerNames: providerNamesFromConfig(config),
  });
  const address = await app.listen({ host: config.api.host, port: config.api.port });
  shutdown.add('http server', () => closeIngressServer(app));
  return address;
}
