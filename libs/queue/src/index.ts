export { createRedis, probeRedis } from './redis.ts';
export type { RedisRole } from './redis.ts';
export {
  createPostgresRunQueue,
  createRunQueue,
  enqueueWake,
  POSTGRES_QUEUE_SCHEMA,
  RUNS_QUEUE,
  wakeJobId,
} from './run-queue.ts';
export type { RunQueue, RunWorker, WakeJob } from './run-queue.ts';
export { openQueueTransport } from './queue-transport.ts';
export type { QueueTransport } from './queue-transport.ts';
export { usesPostgresQueue } from './notice-bus.ts';
export type { NoticeBus, QueueMode, QueueSettings } from './notice-bus.ts';
export { HEARTBEAT_INTERVAL_MS, RedisNoticeBus } from './redis-notice-bus.ts';
export { PostgresNoticeBus } from './postgres-notice-bus.ts';
export { publishTurnDone, turnDoneChannel, TurnDoneListener } from './turn-events.ts';
export { EventNoticeListener } from './event-notices.ts';
export { PostgresTurnStreamStore, RedisTurnStreamStore, STREAM_TTL_SECONDS, turnStreamChannel, TurnStreamListener } from './turn-stream.ts';
export type { StoredStreamEntry, TurnStreamEntry, TurnStreamStore } from './turn-stream.ts';
export { TurnStreamWriter } from './turn-stream-writer.ts';
export { StreamRelay } from './stream-relay.ts';
export type { StreamView } from './stream-relay.ts';
export { publishSessionControl, sessionControlChannel, SessionControlListener } from './session-control.ts';
export type { ControlAction } from './session-control.ts';
export { announceAccepted } from './accepted.ts';
export type { AcceptedNotice } from './accepted.ts';
export { bullmqDepth } from './queue-depth.ts';
