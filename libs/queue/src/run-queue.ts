import { createPostgresBackend, Queue, Worker, withBackend } from 'bullmq';
import type { IQueueBackend, JobProgress, Processor } from 'bullmq';
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

/** The run queue on either store: the same BullMQ API over Redis or over BullMQ's Postgres backend. */
export type RunQueue = Queue<WakeJob, void, string, WakeJob, void, string, IQueueBackend, unknown>;
export type RunWorker = Worker<WakeJob, void, string, IQueueBackend, JobProgress, unknown>;

/** BullMQ's Postgres tables live in their own schema of Herald's database. */
export const POSTGRES_QUEUE_SCHEMA = 'bullmq';

/**
 * BullMQ's Postgres connection: its own small pool, its schema migrated on first connect (under an
 * advisory lock, so any number of processes may race to it).
 */
export function postgresQueueConnection(databaseUrl: string, poolSize: number) {
  return { connectionString: databaseUrl, schema: POSTGRES_QUEUE_SCHEMA, max: poolSize, migrate: true };
}

// The classes are generic in their backend; Herald's code sees only the backend-neutral API, so the
// concrete backend type is widened to IQueueBackend here, in the one place that picks it.
const onPostgres = withBackend(createPostgresBackend);

export function createRunQueue(connection: Redis, prefix: string): RunQueue {
  return new Queue<WakeJob, void, string>(RUNS_QUEUE, { connection, prefix }) as unknown as RunQueue;
}

export function createPostgresRunQueue(databaseUrl: string): RunQueue {
  return new onPostgres.Queue<WakeJob>(RUNS_QUEUE, { connection: postgresQueueConnection(databaseUrl, 2) }) as unknown as RunQueue;
}

export function createRunWorker(connection: Redis, prefix: string, processor: Processor<WakeJob, void>, concurrency: number): RunWorker {
  return new Worker<WakeJob, void>(RUNS_QUEUE, processor, { connection, prefix, concurrency, autorun: true }) as unknown as RunWorker;
}

export function createPostgresRunWorker(databaseUrl: string, processor: Processor<WakeJob, void>, concurrency: number): RunWorker {
  return new onPostgres.Worker<WakeJob, void>(RUNS_QUEUE, processor, {
    connection: postgresQueueConnection(databaseUrl, 4),
    concurrency,
    autorun: true,
  }) as unknown as RunWorker;
}

export async function enqueueWake(queue: RunQueue, sessionId: string, generation: string): Promise<void> {
  const traceParent = currentTraceParent();
  await queue.add('wake', traceParent === undefined ? { sessionId } : { sessionId, traceParent }, {
    jobId: wakeJobId(sessionId, generation),
    removeOnComplete: true,
    removeOnFail: true,
    // A failed drain is almost always a storage blip: retry soon. Past the attempts the reconciler
    // still finds the session, so a short budget loses nothing.
    attempts: 6,
    backoff: { type: 'exponential', delay: 200 },
  });
}
