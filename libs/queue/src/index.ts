export { createRedis } from './redis.ts';
export type { RedisRole } from './redis.ts';
export { RUNS_QUEUE, createRunQueue, enqueueWake, wakeJobId } from './run-queue.ts';
export type { WakeJob } from './run-queue.ts';
export { publishTurnDone, turnDoneChannel, TurnDoneListener } from './turn-events.ts';
export { publishSessionControl, sessionControlChannel, SessionControlListener } from './session-control.ts';
export type { ControlAction } from './session-control.ts';
export { announceAccepted } from './accepted.ts';
export type { AcceptedNotice } from './accepted.ts';
