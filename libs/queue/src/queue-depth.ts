import type { RunQueue } from './run-queue.ts';
import type { QueueDepth } from '@herald/telemetry';

/** A BullMQ queue's counts and the age of its oldest waiting job, read in two round trips. */
export async function bullmqDepth(queue: RunQueue): Promise<QueueDepth> {
  const [counts, oldest] = await Promise.all([queue.getJobCounts('wait', 'active', 'delayed', 'failed'), queue.getJobs(['wait'], 0, 0, true)]);
  const first = oldest[0];
  return {
    queue: queue.name,
    waiting: counts.wait ?? 0,
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
    failed: counts.failed ?? 0,
    oldestWaitingSeconds: first ? Math.max(0, (Date.now() - first.timestamp) / 1000) : 0,
  };
}
