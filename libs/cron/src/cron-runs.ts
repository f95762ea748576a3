import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { CronRunStatus, CronRunTrigger, Database, StoredFile } from '@herald/db';
import { deliveriesByKeyPrefix } from '@herald/delivery';
import { sendManualRun } from './cron-fires.ts';
import { getCronJob, inTransaction } from './cron-store.ts';
import type { CronScope } from './cron-store.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * Asks for a run now, outside the schedule: a pending run and its pg-boss job, committed together,
 * so a scheduler starts it as soon as it takes the job and delivers it like any other run.
 */
export async function requestCronRun(db: Executor, id: string, scope: CronScope = {}): Promise<CronRunView | undefined> {
  const job = await getCronJob(db, id, scope);
  if (!job) return undefined;
  return inTransaction(db, async (trx) => {
    const row = await trx
      .insertInto('cron_runs')
      .values({ id: randomUUID(), job_id: id, scheduled_for: sql<Date>`herald_cron_now()`, trigger: 'manual' })
      .returningAll()
      .executeTakeFirstOrThrow();
    await sendManualRun(trx, row.id);
    return { ...runView(row), deliveries: [] };
  });
}

export interface CronDelivery {
  target: string;
  status: string;
  attempts: number;
  receipt: unknown;
  error: string | null;
  deliveredAt: Date | null;
}

export interface CronRunView {
  id: string;
  jobId: string;
  scheduledFor: Date;
  trigger: CronRunTrigger;
  status: CronRunStatus;
  sessionId: string | null;
  output: string | null;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  deliveries: CronDelivery[];
}

function runView(row: Selectable<Database['cron_runs']>): Omit<CronRunView, 'deliveries'> {
  return {
    id: row.id,
    jobId: row.job_id,
    scheduledFor: row.scheduled_for,
    trigger: row.trigger,
    status: row.status,
    sessionId: row.session_id,
    output: row.output,
    error: row.error,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.started_at && row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null,
  };
}

/** A job's runs, newest first, each with the receipts of its deliveries. */
export async function listCronRuns(db: Executor, jobId: string, limit = 20): Promise<CronRunView[]> {
  const rows = await db.selectFrom('cron_runs').selectAll().where('job_id', '=', jobId).orderBy('scheduled_for', 'desc').limit(limit).execute();
  const deliveries = await cronDeliveries(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ ...runView(row), deliveries: deliveries.get(row.id) ?? [] }));
}

/** Outbox rows keyed cron:<run_id>:<target>, grouped by run. */
async function cronDeliveries(db: Executor, runIds: string[]): Promise<Map<string, CronDelivery[]>> {
  const byRun = new Map<string, CronDelivery[]>();
  if (runIds.length === 0) return byRun;
  const rows = await deliveriesByKeyPrefix(
    db,
    runIds.map((id) => `cron:${id}:`),
  );
  for (const row of rows) {
    const [, runId = '', ...target] = row.idempotencyKey.split(':');
    const list = byRun.get(runId) ?? [];
    list.push({
      target: target.join(':'),
      status: row.status,
      attempts: row.attempts,
      receipt: row.receipt,
      error: row.lastError,
      deliveredAt: row.deliveredAt,
    });
    byRun.set(runId, list);
  }
  return byRun;
}

export interface ScheduledRun {
  runId: string;
  jobId: string;
  /** Toolsets the job allows its runs; empty means the profile's default for unattended runs. */
  toolsets: string[];
  skills: string[];
}

/**
 * The cron run an inbound event belongs to, if any: how a worker tells an unattended scheduled
 * run (no approvals) and which toolsets the job narrowed it to.
 */
export async function scheduledRunFor(db: Executor, eventId: string): Promise<ScheduledRun | undefined> {
  const row = await db
    .selectFrom('cron_runs')
    .innerJoin('cron_jobs', 'cron_jobs.id', 'cron_runs.job_id')
    .select(['cron_runs.id as run_id', 'cron_jobs.id as job_id', 'cron_jobs.toolsets', 'cron_jobs.skills'])
    .where('cron_runs.event_id', '=', eventId)
    .executeTakeFirst();
  return row ? { runId: row.run_id, jobId: row.job_id, toolsets: row.toolsets, skills: row.skills } : undefined;
}

/**
 * Puts a file on the report of the scheduled run whose event turn `turnId` answers (a cron session
 * has no chat to send it to): it goes out with the report. Keyed on the turn, not the session, so a
 * named session's next run, already waiting, does not get it too. The same file twice (a replayed
 * call) is kept once. False when the turn answers no running scheduled run.
 */
export async function attachRunFile(db: Executor, turnId: string, file: StoredFile): Promise<boolean> {
  const entry = JSON.stringify([{ sha256: file.sha256, name: file.name, mime: file.mime, size: file.size }]);
  const result = await sql<{ id: string }>`
    UPDATE cron_runs SET files = CASE WHEN files @> ${entry}::jsonb THEN files ELSE files || ${entry}::jsonb END
    WHERE status = 'running' AND event_id IN (SELECT id FROM inbound_events WHERE turn_id = ${turnId}::uuid)
    RETURNING id`.execute(db);
  return result.rows.length > 0;
}
