import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { createCronJob, CronJobInputError, ScheduleError } from '@herald/cron';
import type { Db, CronOrigin } from '@herald/db';
import type { Skipped } from './import-knowledge.ts';

export interface CronReport {
  imported: string[];
  alreadyThere: string[];
  skipped: Skipped[];
}

// The fields of a Hermes job record (cron/jobs.py) that have a meaning in Herald; the rest (model
// pins, scripts, workdir, context_from) are Hermes-process specific and reported as not carried.
const hermesJob = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  prompt: z.string().default(''),
  skills: z.array(z.string()).optional(),
  skill: z.string().optional(),
  schedule: z.union([
    z.string(),
    z.looseObject({ kind: z.string(), expr: z.string().optional(), minutes: z.number().optional(), run_at: z.string().optional(), display: z.string().optional() }),
  ]),
  schedule_display: z.string().optional(),
  enabled: z.boolean().default(true),
  state: z.string().optional(),
  deliver: z.union([z.string(), z.array(z.string())]).optional(),
  origin: z.looseObject({ platform: z.string(), chat_id: z.union([z.string(), z.number()]), thread_id: z.union([z.string(), z.number()]).nullish() }).nullish(),
  enabled_toolsets: z.array(z.string()).nullish(),
  script: z.string().nullish(),
  no_agent: z.boolean().optional(),
});
type HermesJob = z.infer<typeof hermesJob>;

/** The schedule as Herald's parser reads it: Hermes and Herald share the syntax. */
function scheduleText(job: HermesJob): string {
  const schedule = job.schedule;
  if (typeof schedule === 'string') return schedule;
  if (schedule.kind === 'cron' && schedule.expr) return schedule.expr;
  if (schedule.kind === 'interval' && schedule.minutes) return `every ${schedule.minutes}m`;
  if (schedule.kind === 'once' && schedule.run_at) return schedule.run_at;
  return schedule.display ?? job.schedule_display ?? '';
}

function originOf(job: HermesJob): CronOrigin | null {
  if (!job.origin || !['telegram', 'discord'].includes(job.origin.platform)) return null;
  const origin: CronOrigin = { platform: job.origin.platform, chatType: 'dm', chatId: String(job.origin.chat_id) };
  if (job.origin.thread_id !== null && job.origin.thread_id !== undefined) origin.threadId = String(job.origin.thread_id);
  return origin;
}

async function readJobs(home: string): Promise<unknown[] | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(home, 'cron', 'jobs.json'), 'utf8')) as unknown;
    if (Array.isArray(parsed)) return parsed;
    const jobs = (parsed as { jobs?: unknown }).jobs;
    return Array.isArray(jobs) ? jobs : [];
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * $HERMES_HOME/cron/jobs.json into cron jobs of the person importing. A job already imported (same
 * name, prompt and schedule) is left alone; script jobs and finished one-shots are reported.
 */
export async function importCron(db: Db, home: string, profileId: string, userId: string, timezone: string): Promise<CronReport> {
  const report: CronReport = { imported: [], alreadyThere: [], skipped: [] };
  for (const raw of (await readJobs(home)) ?? []) {
    const parsed = hermesJob.safeParse(raw);
    if (!parsed.success) {
      report.skipped.push({ what: 'a job record', why: `unreadable: ${parsed.error.issues[0]?.message ?? 'bad shape'}` });
      continue;
    }
    await importJob(db, parsed.data, { profileId, userId, timezone }, report);
  }
  return report;
}

async function importJob(db: Db, job: HermesJob, owner: { profileId: string; userId: string; timezone: string }, report: CronReport): Promise<void> {
  const name = job.name ?? job.prompt.slice(0, 50);
  const why = job.script || job.no_agent ? 'runs a Hermes script; Herald runs prompts only' : job.state === 'completed' ? 'already completed in Hermes' : undefined;
  if (why !== undefined) {
    report.skipped.push({ what: name, why });
    return;
  }
  const schedule = scheduleText(job);
  const existing = await db
    .selectFrom('cron_jobs')
    .select('id')
    .where('profile_id', '=', owner.profileId)
    .where('creator_user_id', '=', owner.userId)
    .where('name', '=', name)
    .where('prompt', '=', job.prompt)
    .where('schedule', '=', schedule)
    .executeTakeFirst();
  if (existing) {
    report.alreadyThere.push(name);
    return;
  }
  try {
    await createCronJob(db, {
      profileId: owner.profileId,
      creatorUserId: owner.userId,
      name,
      prompt: job.prompt,
      schedule,
      timezone: owner.timezone,
      skills: job.skills ?? (job.skill ? [job.skill] : []),
      toolsets: job.enabled_toolsets ?? [],
      deliver: job.deliver ?? 'local',
      origin: originOf(job),
      // The import is an operator's act at the shell, carrying the targets the Hermes owner chose.
      byOperator: true,
      enabled: job.enabled && job.state !== 'paused',
    });
    report.imported.push(name);
  } catch (error) {
    if (!(error instanceof CronJobInputError || error instanceof ScheduleError)) throw error;
    report.skipped.push({ what: name, why: error.message });
  }
}
