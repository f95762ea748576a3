export { createRedis } from './redis.ts';
export type { RedisRole } from './redis.ts';
export { RUNS_QUEUE, createRunQueue, enqueueWake, wakeJobId } from './run-queue.ts';
export type { WakeJob } from './run-queue.ts';
export { publishTurnDone, turnDoneChannel, TurnDoneListener } from './turn-events.ts';
export { publishSessionControl, sessionControlChannel, SessionControlListener } from './session-control.ts';
export type { ControlAction } from './session-control.ts';
export { REVIEW_QUEUE, createReviewQueue, enqueueReview, reviewJobId } from './review-queue.ts';
export type { ReviewJob } from './review-queue.ts';
