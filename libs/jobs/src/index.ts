export { JOBS_SCHEMA } from './boss-db.ts';
export { sendJob, applyPolicies } from './job-sender.ts';
export type { SendOptions } from './job-sender.ts';
export { ensureQueues } from './job-queues.ts';
export type { QueueSpec } from './job-queues.ts';
export { JobConsumer, isLastAttempt } from './job-consumer.ts';
export type { Job, JobHandler, ConsumerOptions } from './job-consumer.ts';
export { JobRuntime, prepareJobs } from './job-runtime.ts';
export type { JobRuntimeOptions } from './job-runtime.ts';
