import { createHash } from 'node:crypto';
import { listCronJobs } from '@herald/cron';
import type { CronJobView } from '@herald/cron';
import type { Db } from '@herald/db';

// The person's cron jobs as Hermes' cron/jobs.json records (cron/jobs.py): the schedule in its
// {kind, ...} form, deliver as Hermes' comma-separated targets, paused with its reason.

function scheduleRecord(job: CronJobView): Record<string, unknown> {
  if (job.scheduleKind === 'cron') return { kind: 'cron', expr: job.schedule, display: job.schedule };
  const every = /^every\s+(\d+)\s*(m|h|d)\w*$/i.exec(job.schedule.trim());
  if (job.scheduleKind === 'interval' && every !== null) {
    const minutes = Number(every[1]) * { m: 1, h: 60, d: 1440 }[every[2]!.toLowerCase() as 'm' | 'h' | 'd'];
    return { kind: 'interval', minutes, display: `every ${minutes}m` };
  }
  if (job.scheduleKind === 'once') return { kind: 'once', run_at: job.schedule, display: job.schedule };
  return { kind: job.scheduleKind, display: job.schedule };
}

/** Hermes job ids are 12 hex characters; the same Herald job always gets the same one. */
function hermesJobId(id: string): string {
  return createHash('sha1').update(id).digest('hex').slice(0, 12);
}

function jobRecord(job: CronJobView): Record<string, unknown> {
  const origin = job.origin === null ? null : { platform: job.origin.platform, chat_id: job.origin.chatId, chat_type: job.origin.chatType, thread_id: job.origin.threadId ?? null };
  return {
    id: hermesJobId(job.id),
    name: job.name,
    prompt: job.prompt,
    skills: job.skills,
    skill: job.skills[0] ?? null,
    model: null,
    provider: null,
    base_url: null,
    script: null,
    schedule: scheduleRecord(job),
    schedule_display: job.schedule,
    repeat: { times: job.scheduleKind === 'once' ? 1 : null, completed: 0 },
    enabled: job.enabled,
    state: job.state,
    paused_at: null,
    paused_reason: job.pausedReason,
    created_at: job.createdAt.toISOString(),
    next_run_at: job.nextRunAt?.toISOString() ?? null,
    last_run_at: job.lastRunAt?.toISOString() ?? null,
    last_status: null,
    last_error: null,
    deliver: job.deliver.length > 0 ? job.deliver.join(',') : 'local',
    origin,
    enabled_toolsets: job.toolsets.length > 0 ? job.toolsets : null,
    workdir: null,
  };
}

export interface CronExport {
  jobs: Record<string, unknown>[];
  /** The zone every job's times are read in, when they share one: Hermes keeps one per home (config.yaml). */
  timezone: string | null;
}

export async function exportCron(db: Db, profileId: string, userId: string): Promise<CronExport> {
  const jobs = (await listCronJobs(db, { profileId, userId })).filter((job) => job.state !== 'completed');
  const zones = new Set(jobs.map((job) => job.timezone));
  return { jobs: jobs.map(jobRecord), timezone: zones.size === 1 ? [...zones][0]! : null };
}
