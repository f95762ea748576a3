export { ScheduleError, SCHEDULE_HELP, parseSchedule, nextOccurrence, previousOccurrence, misfireGraceMs, isValidTimeZone, zonedTimeToInstant } from './cron-schedule.ts';
export type { CronSchedule } from './cron-schedule.ts';
export { parseDeliver, describeTarget, DeliverSpecError, DELIVER_HELP } from './cron-targets.ts';
export {
  createCronJob,
  getCronJob,
  listCronJobs,
  updateCronJob,
  pauseCronJob,
  resumeCronJob,
  removeCronJob,
  requestCronRun,
  listCronRuns,
  cronNow,
  scheduleOf,
  CronJobInputError,
  CRON_MISSED_POLICIES,
  CRON_SESSION_MODES,
  SCHEDULED_PLATFORM,
  scheduledRunFor,
} from './cron-store.ts';
export type { CronJobInput, CronJobPatch, CronJobView, CronJobState, CronRunView, CronDelivery, CronScope, ScheduledRun } from './cron-store.ts';
