import { z } from 'zod';
import { isoTime } from './common.ts';

const target = z.union([z.object({ platform: z.literal('webhook'), url: z.string() }), z.object({ platform: z.string(), chatId: z.string(), threadId: z.string().optional() })]);

export const cronJobView = z.object({
  job_id: z.string(),
  profile: z.string(),
  user_id: z.string(),
  name: z.string(),
  prompt: z.string(),
  schedule: z.string(),
  schedule_kind: z.string(),
  timezone: z.string(),
  session_mode: z.string(),
  session: z.string().nullable(),
  skills: z.array(z.string()),
  toolsets: z.array(z.string()),
  deliver: z.array(z.string()),
  targets: z.array(target),
  origin: z.object({ platform: z.string(), chatType: z.string(), chatId: z.string(), threadId: z.string().optional() }).nullable(),
  enabled: z.boolean(),
  state: z.string(),
  paused_reason: z.string().nullable(),
  missed_policy: z.string(),
  consecutive_failures: z.number().int(),
  next_run_at: isoTime.nullable(),
  last_run_at: isoTime.nullable(),
  created_at: isoTime,
});

export const cronRunView = z.object({
  run_id: z.string(),
  job_id: z.string(),
  scheduled_for: isoTime,
  trigger: z.string(),
  status: z.string(),
  session_id: z.string().nullable(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  started_at: isoTime.nullable(),
  finished_at: isoTime.nullable(),
  duration_ms: z.number().nullable(),
  deliveries: z.array(
    z.object({
      target: z.string(),
      status: z.string(),
      attempts: z.number().int(),
      receipt: z.unknown(),
      error: z.string().nullable(),
      delivered_at: isoTime.nullable(),
    }),
  ),
});

export const cronJobList = z.object({ jobs: z.array(cronJobView) });
export const cronRunList = z.object({ runs: z.array(cronRunView) });

/** GET /v1/cron/preview: the next runs of a schedule as the scheduler would fire them, oldest first. */
export const cronPreview = z.object({
  schedule: z.string(),
  schedule_kind: z.string(),
  timezone: z.string(),
  runs: z.array(isoTime),
});

export type CronJobView = z.infer<typeof cronJobView>;
export type CronPreview = z.infer<typeof cronPreview>;
export type CronRunView = z.infer<typeof cronRunView>;
export type CronJobList = z.infer<typeof cronJobList>;
export type CronRunList = z.infer<typeof cronRunList>;
