import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { sendJob } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * One occurrence of a job (or one "run now") is one pg-boss job of this queue, sent in the
 * transaction that decides it: the job's creation, resume or reschedule, or the handling of the
 * occurrence before it. See docs/decisions/2026-12-01-pg-boss.md for why not pg-boss's schedule().
 */
export const CRON_FIRE_QUEUE = 'cron-fire';
/** A run's turn ended: record it and deliver its report. Sent by the worker with the turn's completion. */
export const CRON_FINISH_QUEUE = 'cron-finish';
export const CRON_FIRE_DEAD_LETTER_QUEUE = 'cron-fire-dead-letter';
export const CRON_FINISH_DEAD_LETTER_QUEUE = 'cron-finish-dead-letter';

/** An occurrence of a job's schedule, or a pending manual run. */
export type CronFireJob = { jobId: string; scheduledFor: string } | { runId: string };

export interface CronFinishJob {
  eventId: string;
}

/** The cron queues' policy; a fire or finish that fails every retry is dead-lettered and shown on the job. */
export function cronQueues(): QueueSpec[] {
  const month = 30 * 24 * 60;
  const handler = { retryLimit: 5, retryDelaySeconds: 1, retryBackoff: true, expireInSeconds: 60, retentionMinutes: month };
  return [
    { name: CRON_FIRE_DEAD_LETTER_QUEUE, ...handler },
    { name: CRON_FINISH_DEAD_LETTER_QUEUE, ...handler },
    { name: CRON_FIRE_QUEUE, ...handler, deadLetter: CRON_FIRE_DEAD_LETTER_QUEUE },
    { name: CRON_FINISH_QUEUE, ...handler, deadLetter: CRON_FINISH_DEAD_LETTER_QUEUE },
  ];
}

/** The scheduler's clock: herald_cron_now(), and its offset from the database clock (0 outside tests). */
export interface CronClock {
  now: Date;
  offsetMs: number;
}

export async function cronClock(db: Executor): Promise<CronClock> {
  const result = await sql<{ now: Date; offset_ms: string }>`
    SELECT herald_cron_now() AS now, coalesce((SELECT offset_ms FROM cron_clock), 0) AS offset_ms`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('herald_cron_now() returned nothing');
  return { now: new Date(row.now), offsetMs: Number(row.offset_ms) };
}

/** A stable UUID for a text key: the same occurrence always gets the same pg-boss job id. */
function keyId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function occurrenceKey(jobId: string, scheduledFor: Date): string {
  return `${jobId}@${scheduledFor.toISOString()}`;
}

/**
 * Sends the fire of one occurrence, due at `scheduledFor` on the scheduler's clock. Its job id is
 * derived from job id and time, so an occurrence is one pg-boss job however often it is sent. A
 * fire is never cancelled (that would leave a dead job holding the id): one that finds its job
 * paused, removed or rescheduled when it comes due does nothing.
 */
export async function sendFire(db: Executor, jobId: string, scheduledFor: Date, clock: CronClock): Promise<boolean> {
  return sendJob(db, CRON_FIRE_QUEUE, { jobId, scheduledFor: scheduledFor.toISOString() } satisfies CronFireJob, {
    id: keyId(occurrenceKey(jobId, scheduledFor)),
    singletonKey: occurrenceKey(jobId, scheduledFor),
    startAfter: new Date(scheduledFor.getTime() - clock.offsetMs),
  });
}

/** Starts a pending manual run as soon as a scheduler takes it; the run id is the job id. */
export async function sendManualRun(db: Executor, runId: string): Promise<boolean> {
  return sendJob(db, CRON_FIRE_QUEUE, { runId } satisfies CronFireJob, { id: runId });
}

/** Tells the scheduler a cron run's turn ended; the event id is the job id (one per run). */
export async function sendRunFinished(db: Executor, eventId: string): Promise<boolean> {
  return sendJob(db, CRON_FINISH_QUEUE, { eventId } satisfies CronFinishJob, { id: eventId });
}
