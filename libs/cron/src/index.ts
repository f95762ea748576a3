export {
  ScheduleError,
  SCHEDULE_HELP,
  parseSchedule,
  nextOccurrence,
  firstOccurrence,
  upcomingOccurrences,
  previousOccurrence,
  misfireGraceMs,
  isValidTimeZone,
  zonedTimeToInstant,
} from './cron-schedule.ts';
export type { CronSchedule } from './cron-schedule.ts';
export { parseDeliver, describeTarget, DeliverSpecError, DELIVER_HELP } from './cron-targets.ts';
export { accountRefusal, addressRefusal, refusedTarget, targetRefusal } from './cron-target-rule.ts';
export type { TargetChooser } from './cron-target-rule.ts';
export {
  createCronJob,
  getCronJob,
  listCronJobs,
  updateCronJob,
  pauseCronJob,
  resumeCronJob,
  removeCronJob,
  cronNow,
  scheduleOf,
  CronJobInputError,
  CRON_MISSED_POLICIES,
  CRON_SESSION_MODES,
  SCHEDULED_PLATFORM,
} from './cron-store.ts';
export type { CronJobInput, CronJobPatch, CronJobView, CronJobState, CronScope } from './cron-store.ts';
export { attachRunFile, requestCronRun, listCronRuns, scheduledRunFor } from './cron-runs.ts';
export type { CronRunView, CronDelivery, ScheduledRun } from './cron-runs.ts';
export { CRON_FIRE_QUEUE, CRON_FINISH_QUEUE, CRON_FIRE_DEAD_LETTER_QUEUE, CRON_FINISH_DEAD_LETTER_QUEUE, cronQueues, cronClock, sendFire, sendManualRun, sendRunFinished } from './cron-fires.ts';
export type { CronClock, CronFireJob, CronFinishJob } from './cron-fires.ts';
export { dispatchManualRun, fireOccurrence, scheduledRunText, sendOpenFires } from './cron-firing.ts';
export type { DispatchedRun } from './cron-firing.ts';
export { completeRun, failRun, isSilentAnswer, unfinishedRuns } from './cron-completion.ts';
export type { CompletedRun, CompletionOptions } from './cron-completion.ts';
export { planOccurrences } from './occurrence-plan.ts';
export { pauseProfileJobs } from './profile-jobs.ts';
export type { OccurrencePlan } from './occurrence-plan.ts';
export { findSameCronJob } from './cron-lookup.ts';
export type { CronJobIdentity } from './cron-lookup.ts';
export { listCronRunJobs } from './cron-run-jobs.ts';
