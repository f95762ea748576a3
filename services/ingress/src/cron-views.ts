import type { CronJobView, CronRunView } from '@herald/cron';

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

export function jobJson(job: CronJobView) {
  return {
    job_id: job.id,
    profile: job.profileId,
    user_id: job.creatorUserId,
    name: job.name,
    prompt: job.prompt,
    schedule: job.schedule,
    schedule_kind: job.scheduleKind,
    timezone: job.timezone,
    session_mode: job.sessionMode,
    session: job.sessionName,
    skills: job.skills,
    toolsets: job.toolsets,
    deliver: job.deliver,
    targets: job.targets,
    origin: job.origin,
    enabled: job.enabled,
    state: job.state,
    paused_reason: job.pausedReason,
    missed_policy: job.missedPolicy,
    consecutive_failures: job.consecutiveFailures,
    next_run_at: iso(job.nextRunAt),
    last_run_at: iso(job.lastRunAt),
    created_at: job.createdAt.toISOString(),
  };
}

export function runJson(run: CronRunView) {
  return {
    run_id: run.id,
    job_id: run.jobId,
    scheduled_for: run.scheduledFor.toISOString(),
    trigger: run.trigger,
    status: run.status,
    session_id: run.sessionId,
    output: run.output,
    error: run.error,
    started_at: iso(run.startedAt),
    finished_at: iso(run.finishedAt),
    duration_ms: run.durationMs,
    deliveries: run.deliveries.map((delivery) => ({
      target: delivery.target,
      status: delivery.status,
      attempts: delivery.attempts,
      receipt: delivery.receipt,
      error: delivery.error,
      delivered_at: iso(delivery.deliveredAt),
    })),
  };
}
