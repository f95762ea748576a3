import type { Config, Logger, Shutdown } from '@herald/core';
import { createProvider } from '@herald/agent';
import type { Provider } from '@herald/agent';
import type { Db } from '@herald/db';
import type { QueueTransport, RunQueue } from '@herald/queue';
import { BUILTIN_TOOLSETS, createDelegateTool, expandToolsets } from '@herald/tools';
import type { ToolRegistry } from '@herald/tools';
import { wakeSessions } from '@herald/worker';

/** The model of delegate_task's children: HERALD_DELEGATION_MODEL, else none (the main model runs them). */
export function childProviderFromConfig(config: Config): Provider | null {
  const endpoint = config.delegation.model;
  if (!endpoint) return null;
  return createProvider({
    provider: endpoint.provider,
    model: endpoint.model,
    apiKey: endpoint.apiKey ?? 'unused',
    baseURL: endpoint.baseURL,
    timeoutMs: config.model.timeoutMs,
  });
}

/**
 * Registers delegate_task on a worker's registry, with a run queue that wakes the children it
 * creates and the parents of children that end. Returns that queue for the worker service.
 */
export function registerDelegation(config: Config, registry: ToolRegistry, transport: QueueTransport, db: Db, log: Logger, shutdown: Shutdown): RunQueue {
  const queue = transport.createRunQueue();
  queue.on('error', (error) => log.warn({ err: error }, 'run queue error'));
  shutdown.add('delegation queue', () => queue.close());
  registry.register(
    createDelegateTool({
      config: config.delegation,
      expand: (toolsets) => [...expandToolsets(toolsets, BUILTIN_TOOLSETS, registry.byToolset()).tools],
      wake: (sessionIds) => wakeSessions(db, queue, sessionIds, log),
    }),
  );
  return queue;
}
