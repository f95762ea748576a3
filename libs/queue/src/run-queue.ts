import { Queue } from 'bullmq';
import { currentTraceParent } from '@herald/telemetry';
import type { Redis } from 'ioredis';

export const RUNS_QUEUE = 'runs';

export interface WakeJob {
  sessionId: string;
  /** The W3C traceparent of the message that woke the session, when tracing is on. */
  traceParent?: string;
}

/**
 * The wake-up job id: one per session and wake generation. While a job waits, more messages for
 * the session collapse into it; once a worker starts draining, the generation moves on, so a message
 * arriving mid-drain gets a new job instead of being swallowed by the active one.
 */
export function wakeJobId(sessionId: string, generation: string): string {
  return `wake.${sessionId}.${generation}`;
}

export function createRunQueue(connection: Redis, prefix: string): Queue<WakeJob> {
  return new Queue<WakeJob>(RUNS_QUEUE, { connection, prefix });
}

export async function enqueueWake(queue: Queue<WakeJob>, sessionId: string, generation: string): Promise<void> {
  const traceParent = currentTraceParent();
  await queue.add(
    'wake',
    traceParent === undefined ? { sessionId } : { sessionId, traceParent },
    {
      jobId: wakeJobId(sessionId, generation),
      removeOnComplete: true,
      removeOnFail: true,
      // A failed drain is almost always a storage blip: retry soon. Past the attempts the reconciler
      // still finds the session, so a short budget loses nothing.
      attempts: 6,
      backoff: { type: 'exponential', delay: 200 },
    },
  );
}
