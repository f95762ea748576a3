export {
  registry,
  recordCompression,
  recordCronFire,
  recordCrashRecovery,
  recordDeadLetter,
  recordQuotaRefusal,
  recordDelivery,
  recordFencingRejection,
  recordLeaseClaim,
  recordModelCall,
  recordModelCost,
  recordModelFailover,
  recordReview,
  recordSearch,
  recordToolCall,
  recordTurn,
  watchQueueDepths,
  watchTranscriptCache,
} from './metrics.ts';
export type { QueueDepth, TokenUsage } from './metrics.ts';
export { metricsText, startOpsServer } from './ops-server.ts';
export type { OpsServer, ReadinessCheck } from './ops-server.ts';
export { contextFromTraceParent, currentTraceParent, setSpanAttributes, startTracing, traceLogFields, withSpan } from './tracing.ts';
export type { TracingOptions } from './tracing.ts';
