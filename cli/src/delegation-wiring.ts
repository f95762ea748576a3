import type { Logger, Shutdown } from '@herald/core';
import type { Db } from '@herald/db';
import type { QueueTransport, RunQueue } from '@herald/queue';
import { wakeSessions } from '@herald/worker';
import type { WakeSessions } from './tool-registry.ts';

/**
 * The run queue delegate_task wakes the children it creates (and the parents of children that
 * end) on, closed at shutdown; the worker service sends on it too.
 */
export function openDelegationQueue(transport: QueueTransport, db: Db, log: Logger, shutdown: Shutdown): { queue: RunQueue; wake: WakeSessions } {
  const queue = transport.createRunQueue();
  queue.on('error', (error) => log.warn({ err: error }, 'run queue error'));
  shutdown.add('delegation queue', () => queue.close());
  return { queue, wake: (sessionIds) => wakeSessions(db, queue, sessionIds, log) };
}
