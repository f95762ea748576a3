export { WorkerService } from './worker-service.ts';
export type { WorkerServiceOptions } from './worker-service.ts';
export { NO_MODEL_REPLY, STOPPED_REPLY, INTERNAL_ERROR_REPLY } from './turn-runner.ts';
export { LIFECYCLE_POLL_MS, SessionLifecycle } from './session-lifecycle.ts';
export type { SessionLifecycleOptions } from './session-lifecycle.ts';
export { wakeSessions } from './subagent-turn.ts';
export type { ProfileModels, ProfileModelSet } from './profile-models.ts';
export type { AnswerDrafts, TurnDraft } from './turn-draft.ts';
export { BUSY_RETRY_MAX_MS, BUSY_RETRY_MS, busyRetryMs } from './busy-retry.ts';
