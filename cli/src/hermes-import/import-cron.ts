import { formatNamedChat, isChatPlatform, PLATFORM_FACTS } from '@herald/core';
import { join } from 'node:path';
import { z } from 'zod';
import { createCronJob, CronJobInputError, DeliverSpecError, findSameCronJob, pauseCronJob, ScheduleError } from '@herald/cron';
import type { Db, CronOrigin } from '@herald/db';
import { homeChatsOf } from '@herald/handoff';
import type { HomeChat } from '@herald/handoff';
import { readRegularFile } from '../safe-files.ts';
import { HomeError } from './home-error.ts';
import type { Skipped } from './import-knowledge.ts';

export interface CronReport {
  imported: string[];
  alreadyThere: string[];
  skipped: Skipped[];
  /** Job fields Herald has no place for: field -> jobs that set it. */
  unplaced: Record<string, number>;
}

const JOBS_MAX_BYTES = 16 * 1024 * 1024;

// A Hermes job record as cron/jobs.py writes it: most fields may be null (a job without skills has
// "skill": null, one never run "last_run_at": null), so every field is nullish here.
const id = z.union([z.string(), z.number()]);
const hermesJob = z.looseObject({
  id: id.nullish(),
  name: z.string().nullish(),
  prompt: z.string().nullish(),
  skills: z.array(z.string()).nullish(),
  skill: z.string().nullish(),
  schedule: z.union([
    z.string(),
    z.looseObject({ kind: z.string().nullish(), expr: z.string().nullish(), minutes: z.number().nullish(), run_at: z.string().nullish(), display: z.string().nullish() }),
  ]),
  schedule_display: z.string().nullish(),
  repeat: z.looseObject({ times: z.number().nullish(), completed: z.number().nullish() }).nullish(),
  enabled: z.boolean().nullish(),
  state: z.string().nullish(),
  paused_reason: z.string().nullish(),
  deliver: z.union([z.string(), z.array(z.string())]).nullish(),
  origin: z.looseObject({ platform: z.string(), chat_id: id, chat_type: z.string().nullish(), thread_id: id.nullish() }).nullish(),
  enabled_toolsets: z.array(z.string()).nullish(),
  script: z.string().nullish(),
  no_agent: z.boolean().nullish(),
});
type HermesJob = z.infer<typeof hermesJob>;

/** Fields of a job that only mean something to a Hermes process (its model pin, scripts, working directory). */
const NOT_CARRIED = ['model', 'provider', 'base_url', 'workdir', 'context_from', 'attach_to_session'] as const;

/** The schedule as Herald's parser reads it: Hermes and Herald share the syntax. */
function scheduleText(job: HermesJob): string {
  const schedule = job.schedule;
  if (typeof schedule === 'string') return schedule;
  if (schedule.kind === 'cron' && schedule.expr) return schedule.expr;
  if (schedule.kind === 'interval' && schedule.minutes) return `every ${schedule.minutes}m`;
  if (schedule.kind === 'once' && schedule.run_at) return schedule.run_at;
  return schedule.display ?? job.schedule_display ?? '';
}

const GROUP_TYPES = new Set(['group', 'supergroup', 'channel', 'forum', 'guild', 'thread']);

/** The chat a job was created from; a group or a topic in one stays a group (Telegram group ids are negative). */
export function originOf(job: HermesJob): CronOrigin | null {
  if (!job.origin || !isChatPlatform(job.origin.platform)) return null;
  const chatId = String(job.origin.chat_id);
  const declared = job.origin.chat_type?.toLowerCase();
  const group = declared !== undefined ? GROUP_TYPES.has(declared) : PLATFORM_FACTS[job.origin.platform].negativeIdIsGroup && chatId.startsWith('-');
  const origin: CronOrigin = { platform: job.origin.platform, chatType: group ? 'group' : 'dm', chatId };
  if (job.origin.thread_id !== null && job.origin.thread_id !== undefined && String(job.origin.thread_id) !== '') origin.threadId = String(job.origin.thread_id);
  return origin;
}

/** The jobs in cron/jobs.json; a file that is not JSON refuses the home, naming it. */
export async function readJobs(home: string): Promise<unknown[] | undefined> {
  const path = join(home, 'cron', 'jobs.json');
  const bytes = await readRegularFile(path, JOBS_MAX_BYTES);
  if (bytes === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new HomeError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  if (Array.isArray(parsed)) return parsed;
  const jobs = (parsed as { jobs?: unknown } | null)?.jobs;
  if (!Array.isArray(jobs)) throw new HomeError(`${path}: field jobs: expected a list of jobs`);
  return jobs;
}

interface CronOwner {
  profileId: string;
  userId: string;
  timezone: string;
}

/**
 * The jobs of cron/jobs.json into cron jobs of the person importing, inside the caller's
 * transaction. A job already imported (same name, prompt and schedule) is left alone; script jobs
 * and finished one-shots are skipped and reported by name.
 */
export async function importCron(db: Db, jobs: unknown[], owner: CronOwner): Promise<CronReport> {
  const report: CronReport = { imported: [], alreadyThere: [], skipped: [], unplaced: {} };
  for (const [index, raw] of jobs.entries()) {
    const parsed = hermesJob.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      report.skipped.push({ what: `cron/jobs.json: job ${index + 1}`, why: `field ${issue?.path.join('.') || '(record)'}: ${issue?.message ?? 'bad shape'}` });
      continue;
    }
    countUnplaced(parsed.data, report);
    await importJob(db, parsed.data, owner, report);
  }
  return report;
}

function countUnplaced(job: HermesJob, report: CronReport): void {
  const record = job as Record<string, unknown>;
  for (const field of NOT_CARRIED) {
    const value = record[field];
    if (value !== null && value !== undefined && value !== '' && !(Array.isArray(value) && value.length === 0)) report.unplaced[field] = (report.unplaced[field] ?? 0) + 1;
  }
  // Herald repeats a recurring job until it is removed; a count of runs has no place.
  const times = job.repeat?.times;
  if (typeof times === 'number' && times > 1) report.unplaced['repeat.times'] = (report.unplaced['repeat.times'] ?? 0) + 1;
}

/** Hermes' delivery words Herald names differently: 'all' and a bare platform mean the profile's home chats. */
async function deliverFor(db: Db, job: HermesJob, origin: CronOrigin | null, profileId: string): Promise<string[] | undefined> {
  if (job.deliver === null || job.deliver === undefined) return undefined;
  const items = (typeof job.deliver === 'string' ? job.deliver.split(',') : job.deliver).map((item) => item.trim()).filter((item) => item !== '');
  const homes = await homeChatsOf(db, profileId);
  const named = (chat: HomeChat) => formatNamedChat({ platform: chat.platform, chatId: chat.chatId, threadId: chat.threadId ?? undefined });
  const home = (platform: string) => homes.filter((chat) => chat.platform === platform).map(named);
  return items.flatMap((item) => {
    const lower = item.toLowerCase();
    if (lower === 'all') return homes.length > 0 ? homes.map(named) : ['local'];
    if (isChatPlatform(lower) && origin?.platform !== lower) return home(lower).length > 0 ? home(lower) : [item];
    return [item];
  });
}

async function importJob(db: Db, job: HermesJob, owner: CronOwner, report: CronReport): Promise<void> {
  const prompt = job.prompt ?? '';
  const name = job.name?.trim() || prompt.slice(0, 50) || `hermes job ${String(job.id ?? '')}`;
  const why = job.script || job.no_agent ? 'runs a Hermes script; Herald runs prompts only' : job.state === 'completed' ? 'already completed in Hermes' : undefined;
  if (why !== undefined) {
    report.skipped.push({ what: name, why });
    return;
  }
  const schedule = scheduleText(job);
  const existing = await findSameCronJob(db, { profileId: owner.profileId, creatorUserId: owner.userId, name, prompt, schedule });
  if (existing) {
    report.alreadyThere.push(name);
    return;
  }
  const origin = originOf(job);
  const paused = job.enabled === false || job.state === 'paused';
  try {
    const created = await createCronJob(db, {
      profileId: owner.profileId,
      creatorUserId: owner.userId,
      name,
      prompt,
      schedule,
      timezone: owner.timezone,
      skills: job.skills ?? (job.skill ? [job.skill] : []),
      toolsets: job.enabled_toolsets ?? [],
      deliver: (await deliverFor(db, job, origin, owner.profileId)) ?? (origin ? 'origin' : 'local'),
      origin,
      // The import is an operator's act at the shell, carrying the targets the Hermes owner chose.
      byOperator: true,
      enabled: !paused,
    });
    if (paused) await pauseCronJob(db, created.id, job.paused_reason?.trim() || 'paused in Hermes');
    report.imported.push(name);
  } catch (error) {
    if (!(error instanceof CronJobInputError || error instanceof ScheduleError || error instanceof DeliverSpecError)) throw error;
    report.skipped.push({ what: name, why: error.message });
  }
}
