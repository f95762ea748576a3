import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import { isDeliveryOnlyPlatform } from '@herald/core';
import { describeTarget } from './cron-targets.ts';
import { enqueueOutbound } from '@herald/delivery';
import type { CronOrigin, CronTarget, Database, Db, StoredFile } from '@herald/db';
import { isChatPlatform, storedTarget } from '@herald/core';
import { boundAccount, readBindings } from '@herald/profiles';

/**
 * Hermes' "nothing to report" convention: the whole answer, its first or last line, or its prefix
 * is [SILENT] (SILENT and NO_REPLY as whole lines are accepted too).
 */
export function isSilentAnswer(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.toUpperCase().startsWith('[SILENT]')) return true;
  const lines = trimmed
    .split('\n')
    .map((line) => line.trim().toUpperCase())
    .filter((line) => line !== '');
  const marker = (line: string | undefined) => line === '[SILENT]' || line === 'SILENT' || line === 'NO_REPLY';
  return marker(lines[0]) || marker(lines[lines.length - 1]);
}

export interface CompletionOptions {
  /** Consecutive failed runs after which the job is paused and its owner told. */
  maxFailures: number;
}

export interface CompletedRun {
  runId: string;
  jobId: string;
  status: 'succeeded' | 'silent' | 'failed';
  deliveries: number;
  paused: boolean;
}

/**
 * The outbox target of a report. A delivery-only platform's message has a title of its own (an
 * e-mail's subject): the job's name, stored with the address as the sender reads it.
 */
function targetFields(target: CronTarget, title?: string): Record<string, string> {
  if ('url' in target) return { url: target.url };
  const titled: Record<string, string> = title !== undefined && isDeliveryOnlyPlatform(target.platform) ? { title } : {};
  return { ...storedTarget({ account: target.account, chatId: target.chatId, threadId: target.threadId }), ...titled };
}

/**
 * A chat target that names no account leaves through the account bound to the job's profile on
 * that platform (docs/configuration.md#platform-accounts), so an agent reports through its own bot.
 */
async function withBoundAccounts(trx: Transaction<Database>, profileId: string, targets: CronTarget[]): Promise<CronTarget[]> {
  if (!targets.some((target) => !('url' in target) && target.account === undefined)) return targets;
  const rules = await readBindings(trx);
  return targets.map((target) => {
    if ('url' in target || target.account !== undefined) return target;
    const account = boundAccount(rules, profileId, target.platform);
    return account === undefined ? target : { ...target, account };
  });
}

function shortError(error: string | null, reply: string | null): string {
  const detail = error === null ? 'the run gave no answer' : error === 'provider_error' ? 'the model could not be reached' : error;
  const said = reply?.trim() ? `: ${reply.trim().slice(0, 300)}` : '';
  return `${detail}${said}`;
}

interface Report {
  text: string;
  source: string;
  /** The message's title where the platform shows one (an e-mail's subject). */
  title: string;
  /** Files the run attached with send_file; none for a failure notice. */
  files: readonly StoredFile[];
}

/**
 * How a target gets the report's files: inside the message where the platform has no file message
 * of its own (an e-mail's attachments), as file messages after the text in a chat; a webhook's JSON
 * carries text only.
 */
function fileWay(target: CronTarget): 'inside' | 'after' | 'none' {
  if ('url' in target) return 'none';
  return isDeliveryOnlyPlatform(target.platform) ? 'inside' : 'after';
}

async function deliver(trx: Transaction<Database>, runId: string, sessionId: string | null, targets: CronTarget[], report: Report): Promise<number> {
  let created = 0;
  for (const target of targets) {
    // One key per run and target: a second completion pass (a retry, another replica) adds nothing.
    const key = `cron:${runId}:${describeTarget(target)}`;
    const way = fileWay(target);
    const result = await enqueueOutbound(trx, {
      idempotencyKey: key,
      platform: target.platform,
      target: targetFields(target, report.title),
      text: report.text,
      sessionId,
      source: report.source,
      ...(way === 'inside' ? { attachments: report.files } : {}),
    });
    if (result.created) created++;
    if (way === 'after') created += await deliverFiles(trx, key, target, sessionId, report.files);
  }
  return created;
}

/** A chat's file messages of a report, each its own outbox row queued after the text. */
async function deliverFiles(trx: Transaction<Database>, key: string, target: CronTarget, sessionId: string | null, files: readonly StoredFile[]): Promise<number> {
  let created = 0;
  for (const [index, file] of files.entries()) {
    const result = await enqueueOutbound(trx, {
      idempotencyKey: `${key}:file:${index}`,
      platform: target.platform,
      target: targetFields(target),
      text: '',
      sessionId,
      source: 'cron-file',
      file,
      afterEarlierRows: true,
    });
    if (result.created) created++;
  }
  return created;
}

function originTarget(origin: CronOrigin | null): CronTarget | null {
  if (!origin || !isChatPlatform(origin.platform)) return null;
  return { platform: origin.platform, chatId: origin.chatId, ...(origin.threadId ? { threadId: origin.threadId } : {}) };
}

type FinishedRow = {
  run_id: string;
  session_id: string | null;
  event_status: string;
  reply_text: string | null;
  event_error: string | null;
  completed_at: Date | null;
  job_id: string;
  name: string;
  targets: CronTarget[];
  origin: CronOrigin | null;
  files: StoredFile[];
};

/**
 * Finishes the run whose inbound event is `eventId`, once its turn ended (the reply is on the
 * event): records status, output and timing, and in the same transaction puts the report (or a
 * failure notice) into the outbox, keyed per run and target. The run row is locked and must still
 * be running, so a repeated finish (a retried job, the sweep racing the worker) does nothing; the
 * outbox keys make even that harmless. After `maxFailures` failed runs in a row the job is paused
 * and its owner is told in the chat the job was created from. Returns null when there was nothing
 * to finish.
 */
export async function completeRun(db: Db, eventId: string, options: CompletionOptions): Promise<CompletedRun | null> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('cron_runs')
      .innerJoin('inbound_events', 'inbound_events.id', 'cron_runs.event_id')
      .innerJoin('cron_jobs', 'cron_jobs.id', 'cron_runs.job_id')
      .select([
        'cron_runs.id as run_id',
        'cron_runs.session_id',
        'cron_runs.files',
        'inbound_events.status as event_status',
        'inbound_events.reply_text',
        'inbound_events.error as event_error',
        'inbound_events.completed_at',
        'cron_jobs.id as job_id',
        'cron_jobs.name',
        'cron_jobs.targets',
        'cron_jobs.origin',
        'cron_jobs.profile_id',
      ])
      .where('cron_runs.event_id', '=', eventId)
      .where('cron_runs.status', '=', 'running')
      .where('inbound_events.status', 'in', ['done', 'failed'])
      .forUpdate('cron_runs')
      .executeTakeFirst();
    return row ? finishRow(trx, { ...row, targets: await withBoundAccounts(trx, row.profile_id, row.targets) }, options) : null;
  });
}

async function finishRow(trx: Transaction<Database>, row: FinishedRow, options: CompletionOptions): Promise<CompletedRun> {
  const reply = row.reply_text ?? '';
  const failed = row.event_status === 'failed' || row.event_error !== null || reply.trim() === '';
  const silent = !failed && isSilentAnswer(reply);
  const status = failed ? 'failed' : silent ? 'silent' : 'succeeded';
  await trx
    .updateTable('cron_runs')
    .set({
      status,
      output: reply,
      error: failed ? shortError(row.event_error, null) : null,
      finished_at: row.completed_at ?? sql<Date>`clock_timestamp()`,
    })
    .where('id', '=', row.run_id)
    .execute();
  if (!failed) {
    await trx.updateTable('cron_jobs').set({ consecutive_failures: 0 }).where('id', '=', row.job_id).execute();
    const deliveries = silent ? 0 : await deliver(trx, row.run_id, row.session_id, row.targets, { text: reply, source: 'cron', title: row.name, files: row.files });
    return { runId: row.run_id, jobId: row.job_id, status, deliveries, paused: false };
  }
  return recordFailure(trx, row, reply, options);
}

async function recordFailure(trx: Transaction<Database>, row: FinishedRow, reply: string, options: CompletionOptions): Promise<CompletedRun> {
  const job = await trx
    .updateTable('cron_jobs')
    .set({ consecutive_failures: sql<number>`consecutive_failures + 1`, updated_at: new Date() })
    .where('id', '=', row.job_id)
    .returning(['consecutive_failures', 'enabled'])
    .executeTakeFirstOrThrow();
  const count = job.consecutive_failures;
  const notice = `Scheduled job "${row.name}" failed (${shortError(row.event_error, reply)}). Failures in a row: ${count}.`;
  let deliveries = await deliver(trx, row.run_id, row.session_id, row.targets, { text: notice, source: 'cron-failure', title: `${row.name}: failed`, files: [] });
  let paused = false;
  if (count >= options.maxFailures && job.enabled) {
    const reason = `paused after ${count} failed runs in a row`;
    await trx.updateTable('cron_jobs').set({ enabled: false, paused_reason: reason }).where('id', '=', row.job_id).execute();
    paused = true;
    const owner = originTarget(row.origin);
    if (owner) {
      const text = `Scheduled job "${row.name}" is paused: it failed ${count} times in a row. Fix it and resume it (cronjob action resume, or herald cron resume ${row.job_id}).`;
      const created = await enqueueOutbound(trx, {
        idempotencyKey: `cron:${row.run_id}:owner`,
        platform: owner.platform,
        target: targetFields(owner),
        text,
        sessionId: row.session_id,
        source: 'cron-paused',
      });
      if (created.created) deliveries++;
    }
  }
  return { runId: row.run_id, jobId: row.job_id, status: 'failed', deliveries, paused };
}

/** Runs whose turn ended at least `graceMs` ago but were never finished (their worker died before it said so). */
export async function unfinishedRuns(db: Db, graceMs: number, limit = 100): Promise<string[]> {
  const rows = await db
    .selectFrom('cron_runs')
    .innerJoin('inbound_events', 'inbound_events.id', 'cron_runs.event_id')
    .select('cron_runs.event_id')
    .where('cron_runs.status', '=', 'running')
    .where('inbound_events.status', 'in', ['done', 'failed'])
    .where('inbound_events.completed_at', '<', sql<Date>`clock_timestamp() - make_interval(secs => ${graceMs / 1000})`)
    .limit(limit)
    .execute();
  return rows.flatMap((row) => (row.event_id === null ? [] : [row.event_id]));
}

/** A run whose start or finish was dead-lettered: it failed, and the error says where it stopped. */
export async function failRun(db: Db, where: { runId: string } | { eventId: string }, error: string): Promise<boolean> {
  const result = await db
    .updateTable('cron_runs')
    .set({ status: 'failed', error: error.slice(0, 2000), finished_at: sql<Date>`clock_timestamp()` })
    .where('runId' in where ? 'id' : 'event_id', '=', 'runId' in where ? where.runId : where.eventId)
    .where('status', 'in', ['pending', 'running'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
