import type PgBoss from 'pg-boss';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { bossOptions, newBoss } from './boss-db.ts';
import { applyQueuePolicies } from './job-queues.ts';
import type { QueueSpec } from './job-queues.ts';

export interface SendOptions {
  /** A job id the caller derives from what the job is about: a second send of it is a no-op. */
  id?: string;
  /** Not before this instant (database time). */
  startAfter?: Date;
  /** Shown beside the job in pg-boss's tables; the id is what makes a send idempotent. */
  singletonKey?: string;
}

/**
 * pg-boss bound to one executor, never started: sending needs only its SQL, and a job sent
 * through a transaction commits with that transaction.
 */
function bossOn(executor: Kysely<Database>): Promise<PgBoss> {
  return newBoss(bossOptions(executor));
}

/**
 * Sends one job through `executor`: pass the transaction that causes the job, so both commit or
 * neither does. Returns false when a job with the same id already exists (a duplicate send).
 * A queue that does not exist is an error, never a silently dropped job.
 */
export async function sendJob(executor: Kysely<Database>, queue: string, data: object, options: SendOptions = {}): Promise<boolean> {
  const boss = await bossOn(executor);
  const id = await boss.send(queue, data, {
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.startAfter === undefined ? {} : { startAfter: options.startAfter }),
    ...(options.singletonKey === undefined ? {} : { singletonKey: options.singletonKey }),
  });
  if (id !== null) return true;
  if ((await boss.getQueue(queue)) === null) throw new Error(`job queue '${queue}' does not exist: run herald migrate`);
  return false;
}

/**
 * For a process that only sends (a worker): the queues it sends to get this config's policy, so a
 * job sent before any consumer started carries the deployment's retries and expiry.
 */
export async function applyPolicies(executor: Kysely<Database>, specs: readonly QueueSpec[]): Promise<void> {
  await applyQueuePolicies(await bossOn(executor), specs);
}
