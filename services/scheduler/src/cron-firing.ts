import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import { cronNow, describeTarget, scheduleOf, SCHEDULED_PLATFORM } from '@herald/cron';
import { sessionKey } from '@herald/session';
import type { CronTarget, Database, Db } from '@herald/db';
import { planOccurrences } from './occurrence-plan.ts';

/** A run whose inbound event was committed: the caller enqueues its wake-up. */
export interface DispatchedRun {
  runId: string;
  sessionId: string;
  wakeGeneration: string;
}

/**
 * Turns due jobs into pending runs. Each job row is locked with SKIP LOCKED, so every due job is
 * handled by exactly one replica per tick; the runs and the job's advanced next_run_at commit
 * together, and UNIQUE (job_id, scheduled_for) refuses an occurrence inserted twice regardless.
 * Returns how many runs were created.
 */
export async function materializeDueRuns(db: Db, limit = 100): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const now = await cronNow(trx);
    const jobs = await trx
      .selectFrom('cron_jobs')
      .selectAll()
      .where('enabled', '=', true)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    let created = 0;
    for (const job of jobs) {
      if (job.next_run_at === null) continue;
      let plan: ReturnType<typeof planOccurrences>;
      try {
        plan = planOccurrences(scheduleOf(job), job.next_run_at, now, job.missed_policy);
      } catch (error) {
        // One job whose schedule cannot be evaluated must not stall every other job's tick.
        await trx
          .updateTable('cron_jobs')
          .set({ enabled: false, paused_reason: `the schedule cannot be evaluated: ${(error as Error).message}`, updated_at: new Date() })
          .where('id', '=', job.id)
          .execute();
        continue;
      }
      const rows: { scheduledFor: Date; trigger: 'schedule' | 'missed'; skipped?: string }[] = plan.onTime.map((t) => ({
        scheduledFor: t,
        trigger: 'schedule',
      }));
      if (plan.missed) {
        const note = `missed ${plan.missed.count} occurrence(s) while no scheduler was running`;
        rows.unshift(
          plan.runMissed
            ? { scheduledFor: plan.missed.last, trigger: 'missed' }
            : { scheduledFor: plan.missed.last, trigger: 'missed', skipped: `${note} (missed-fire policy ${job.missed_policy})` },
        );
      }
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
        if (inserted && row.skipped === undefined) created++;
      }
      const fired = rows.some((row) => row.skipped === undefined);
      await trx
        .updateTable('cron_jobs')
        .set({ next_run_at: plan.next, updated_at: new Date(), ...(fired ? { last_run_at: now } : {}) })
        .where('id', '=', job.id)
        .execute();
    }
    return created;
  });
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
  // A fresh session per run routes on the run id; a named session is one route per profile and name.
  const address =
    job.session_mode === 'named'
      ? { profileId: job.profile_id, platform: SCHEDULED_PLATFORM, chatType: 'named', chatId: job.session_name ?? job.id }
      : { profileId: job.profile_id, platform: SCHEDULED_PLATFORM, chatType: 'job', chatId: job.id, threadId: run.id };
  const result = await sql<{ event_id: string | null; session_id: string; outcome: string; wake_generation: string }>`
    SELECT event_id, session_id, outcome, wake_generation FROM herald_accept_message(${randomUUID()}::uuid, ${randomUUID()}::uuid,
      ${sessionKey(address)}, ${address.profileId}, ${address.platform}, ${address.chatType}, ${address.chatId},
      ${address.threadId ?? null}::text, ${job.creator_user_id}, ${'scheduler'}::text, ${job.text},
      ${`cron:${run.id}`}::text, ${1_000_000}::integer)`.execute(trx);
  const row = result.rows[0];
  if (!row?.event_id) throw new Error(`the inbox did not take the event of cron run ${run.id}`);
  return { eventId: row.event_id, sessionId: row.session_id, wakeGeneration: String(row.wake_generation) };
}

/**
 * Starts pending runs through the normal run path: an inbound event in the job's session (fresh or
 * named), deduplicated on the run id, committed with the run's status flip. Pending runs are locked
 * with SKIP LOCKED, so each is dispatched by one replica; the caller enqueues the wake-ups after
 * commit and the reconciler re-enqueues any that are lost.
 */
export async function dispatchPendingRuns(db: Db, limit = 100): Promise<DispatchedRun[]> {
  return db.transaction().execute(async (trx) => {
    const runs = await trx
      .selectFrom('cron_runs')
      .innerJoin('cron_jobs', 'cron_jobs.id', 'cron_runs.job_id')
      .select([
        'cron_runs.id as run_id',
        'cron_runs.trigger',
        'cron_jobs.id',
        'cron_jobs.name',
        'cron_jobs.prompt',
        'cron_jobs.skills',
        'cron_jobs.targets',
        'cron_jobs.enabled',
        'cron_jobs.profile_id',
        'cron_jobs.creator_user_id',
        'cron_jobs.session_mode',
        'cron_jobs.session_name',
      ])
      .where('cron_runs.status', '=', 'pending')
      .orderBy('cron_runs.created_at')
      .limit(limit)
      .forUpdate('cron_runs')
      .skipLocked()
      .execute();
    const dispatched: DispatchedRun[] = [];
    for (const run of runs) {
      if (!run.enabled && run.trigger !== 'manual') {
        // Paused between materializing and dispatching: a paused job fires nothing on its own.
        await trx
          .updateTable('cron_runs')
          .set({ status: 'skipped', error: 'the job was paused before this run started', finished_at: new Date() })
          .where('id', '=', run.run_id)
          .execute();
        continue;
      }
      const accepted = await acceptRunEvent(trx, { id: run.run_id }, { ...run, text: scheduledRunText(run) });
      await trx
        .updateTable('cron_runs')
        .set({ status: 'running', session_id: accepted.sessionId, event_id: accepted.eventId, started_at: sql<Date>`clock_timestamp()` })
        .where('id', '=', run.run_id)
        .execute();
      dispatched.push({ runId: run.run_id, sessionId: accepted.sessionId, wakeGeneration: accepted.wakeGeneration });
    }
    return dispatched;
  });
}
