import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Selectable, Transaction } from 'kysely';
import { sessionKey } from '@herald/session';
import { callAcceptMessage } from '@herald/inbox';
import { cronClock, sendFire, sendManualRun } from './cron-fires.ts';
import type { CronClock } from './cron-fires.ts';
import { scheduleOf, SCHEDULED_PLATFORM } from './cron-store.ts';
import { describeTarget } from './cron-targets.ts';
import type { CronJobsTable, CronTarget, Database, Db } from '@herald/db';
import { planOccurrences } from './occurrence-plan.ts';

/** A run whose inbound event was committed: the caller enqueues its wake-up. */
export interface DispatchedRun {
  runId: string;
  sessionId: string;
  wakeGeneration: string;
}

/** The occurrence's time has not come on the scheduler's clock (it moved back): pg-boss retries it later. */
export class NotDueError extends Error {
  override readonly name = 'NotDueError';
}

type JobRow = Selectable<CronJobsTable>;
type PlannedRun = { scheduledFor: Date; trigger: 'schedule' | 'missed'; skipped?: string };

/** The runs one due occurrence becomes, or null when the schedule cannot be evaluated (the job is paused). */
async function planRuns(trx: Transaction<Database>, job: JobRow, due: Date, now: Date): Promise<{ rows: PlannedRun[]; next: Date | null } | null> {
  let plan: ReturnType<typeof planOccurrences>;
  try {
    plan = planOccurrences(scheduleOf(job), due, now, job.missed_policy);
  } catch (error) {
    await trx
      .updateTable('cron_jobs')
      .set({ enabled: false, paused_reason: `the schedule cannot be evaluated: ${(error as Error).message}`, updated_at: new Date() })
      .where('id', '=', job.id)
      .execute();
    return null;
  }
  const rows: PlannedRun[] = plan.onTime.map((t) => ({ scheduledFor: t, trigger: 'schedule' }));
  if (plan.missed) {
    const note = `missed ${plan.missed.count} occurrence(s) while no scheduler was running`;
    rows.unshift(
      plan.runMissed ? { scheduledFor: plan.missed.last, trigger: 'missed' } : { scheduledFor: plan.missed.last, trigger: 'missed', skipped: `${note} (missed-fire policy ${job.missed_policy})` },
    );
  }
  return { rows, next: plan.next };
}

/** Records the planned runs (UNIQUE (job_id, scheduled_for) refuses one twice) and starts those not skipped. */
async function recordRuns(trx: Transaction<Database>, job: JobRow, rows: PlannedRun[], now: Date): Promise<DispatchedRun[]> {
  const dispatched: DispatchedRun[] = [];
  for (const row of rows) {
    const inserted = await trx
      .insertInto('cron_runs')
      .values({
        id: randomUUID(),
        job_id: job.id,
        scheduled_for: row.scheduledFor,
        trigger: row.trigger,
        ...(row.skipped === undefined ? {} : { status: 'skipped' as const, error: row.skipped, finished_at: now }),
      })
      .onConflict((oc) => oc.columns(['job_id', 'scheduled_for']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted && row.skipped === undefined) dispatched.push(await startRun(trx, inserted.id, job));
  }
  return dispatched;
}

/**
 * Handles one occurrence's fire, in one transaction under the job's row lock: the occurrence (and
 * any the scheduler missed, by the job's missed-fire policy) becomes its history rows, each run not
 * skipped becomes an inbound event in the job's session, the job's next run advances, and the fire
 * of that next occurrence is sent. A fire that finds its job gone, paused or already past this
 * occurrence (a retry after a crash, a rescheduled job) does nothing.
 */
export async function fireOccurrence(db: Db, jobId: string, scheduledFor: Date): Promise<DispatchedRun[]> {
  return db.transaction().execute(async (trx) => {
    const job = await trx.selectFrom('cron_jobs').selectAll().where('id', '=', jobId).forUpdate().executeTakeFirst();
    if (!job?.enabled || job.next_run_at?.getTime() !== scheduledFor.getTime()) return [];
    const clock = await cronClock(trx);
    if (scheduledFor.getTime() > clock.now.getTime()) throw new NotDueError(`occurrence ${scheduledFor.toISOString()} of job ${jobId} is not due yet`);
    const plan = await planRuns(trx, job, scheduledFor, clock.now);
    if (!plan) return [];
    const dispatched = await recordRuns(trx, job, plan.rows, clock.now);
    await advance(
      trx,
      job,
      plan.next,
      plan.rows.some((row) => row.skipped === undefined),
      clock,
    );
    return dispatched;
  });
}

async function advance(trx: Transaction<Database>, job: JobRow, next: Date | null, fired: boolean, clock: CronClock): Promise<void> {
  await trx
    .updateTable('cron_jobs')
    .set({ next_run_at: next, updated_at: new Date(), ...(fired ? { last_run_at: clock.now } : {}) })
    .where('id', '=', job.id)
    .execute();
  if (next !== null) await sendFire(trx, job.id, next, clock);
}

function describeTargets(targets: CronTarget[]): string {
  if (targets.length === 0) return 'nowhere: it is only stored';
  return targets.map(describeTarget).join(', ');
}

/**
 * What the agent reads for a scheduled run: Hermes' cron preamble (automatic delivery, nobody to
 * ask, the [SILENT] convention), the skills to use, then the job's prompt.
 */
export function scheduledRunText(job: { name: string; prompt: string; skills: string[]; targets: CronTarget[] }): string {
  const lines = [
    `[IMPORTANT: You are running as the scheduled job "${job.name}". DELIVERY: your final response is delivered ` +
      `automatically to ${describeTargets(job.targets)}; do not try to send it yourself. Nobody is watching this run: ` +
      'do not ask questions, and actions that need approval are refused. SILENT: if there is genuinely nothing new ' +
      'to report, respond with exactly "[SILENT]" and nothing else.]',
  ];
  if (job.skills.length > 0) lines.push(`[Use these skills for this run: ${job.skills.join(', ')}]`);
  lines.push('', job.prompt);
  return lines.join('\n');
}

async function acceptRunEvent(
  trx: Transaction<Database>,
  run: { id: string },
  job: { id: string; profile_id: string; creator_user_id: string; session_mode: string; session_name: string | null; text: string },
) {
  // Scheduled runs are not limited here (their model tokens still count for the job's creator), and
  // answer no one's question. A fresh session per run routes on the run id; a named session is one route per profile and name.
  const address =
    job.session_mode === 'named'
      ? { profileId: job.profile_id, platform: SCHEDULED_PLATFORM, chatType: 'named', chatId: job.session_name ?? job.id }
      : { profileId: job.profile_id, platform: SCHEDULED_PLATFORM, chatType: 'job', chatId: job.id, threadId: run.id };
  const row = await callAcceptMessage(trx, {
    sessionKey: sessionKey(address),
    profileId: address.profileId,
    platform: address.platform,
    chatType: address.chatType,
    chatId: address.chatId,
    threadId: address.threadId ?? null,
    userId: job.creator_user_id,
    userName: 'scheduler',
    text: job.text,
    dedupeKey: `cron:${run.id}`,
    backlogLimit: 1_000_000,
    operators: [],
    limits: null,
  });
  if (!row?.event_id) throw new Error(`the inbox did not take the event of cron run ${run.id}`);
  return { eventId: row.event_id, sessionId: row.session_id, wakeGeneration: String(row.wake_generation) };
}

/** Starts one pending run through the normal run path, in the caller's transaction. */
async function startRun(trx: Transaction<Database>, runId: string, job: JobRow): Promise<DispatchedRun> {
  const accepted = await acceptRunEvent(trx, { id: runId }, { ...job, text: scheduledRunText(job) });
  await trx
    .updateTable('cron_runs')
    .set({ status: 'running', session_id: accepted.sessionId, event_id: accepted.eventId, started_at: sql<Date>`clock_timestamp()` })
    .where('id', '=', runId)
    .execute();
  return { runId, sessionId: accepted.sessionId, wakeGeneration: accepted.wakeGeneration };
}

/**
 * Starts a pending manual run ("run now"): an inbound event in the job's session, deduplicated on
 * the run id, committed with the run's flip to running. A manual run runs even while its job is
 * paused. Returns null when the run is gone or already started (a retried job).
 */
export async function dispatchManualRun(db: Db, runId: string): Promise<DispatchedRun | null> {
  return db.transaction().execute(async (trx) => {
    const run = await trx.selectFrom('cron_runs').select(['id', 'job_id', 'status']).where('id', '=', runId).forUpdate().executeTakeFirst();
    if (run?.status !== 'pending') return null;
    const job = await trx.selectFrom('cron_jobs').selectAll().where('id', '=', run.job_id).executeTakeFirst();
    if (!job) return null;
    return startRun(trx, run.id, job);
  });
}

/**
 * Sends the fire of every enabled job's next occurrence and of every pending manual run; returns how
 * many were sent anew. Each is a no-op where the pg-boss job exists (its id is derived from what it
 * is about): it gives jobs created before the pg-boss scheduler (an upgraded database) their first fire.
 */
export async function sendOpenFires(db: Db): Promise<number> {
  const clock = await cronClock(db);
  const jobs = await db.selectFrom('cron_jobs').select(['id', 'next_run_at']).where('enabled', '=', true).where('next_run_at', 'is not', null).execute();
  let sent = 0;
  for (const job of jobs) if (job.next_run_at && (await sendFire(db, job.id, job.next_run_at, clock))) sent++;
  const pending = await db.selectFrom('cron_runs').select('id').where('status', '=', 'pending').execute();
  for (const run of pending) if (await sendManualRun(db, run.id)) sent++;
  return sent;
}
