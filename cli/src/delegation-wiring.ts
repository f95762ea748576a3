import type { Config, Logger, Shutdown } from '@herald/core';
import type { Db } from '@herald/db';
import type { QueueTransport, RunQueue } from '@herald/queue';
import { BUILTIN_TOOLSETS, createDelegateTool, expandToolsets } from '@herald/tools';
import type { ToolRegistry } from '@herald/tools';
import { wakeSessions } from '@herald/worker';

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
      limits: config.people.quotas,
      expand: (toolsets) => [...expandToolsets(toolsets, BUILTIN_TOOLSETS, registry.byToolset()).tools],
      wake: (sessionIds) => wakeSessions(db, queue, sessionIds, log),
    }),
  );
  return queue;
}
