export type {
  ChatMessage,
  CompletionRequest,
  CompletionResult,
  FinishReason,
  ImageInput,
  Provider,
  ToolCall,
  ToolDefinition,
  Usage,
} from './types.ts';
export { ProviderError } from './provider-error.ts';
export type { ProviderErrorKind } from './provider-error.ts';
export { completeWithRetry } from './complete-with-retry.ts';
export type { RetryOptions } from './complete-with-retry.ts';
export {
  runToolLoop,
  unansweredToolCalls,
  describeProviderFailure,
  INTERRUPTED_RESULT,
  MAX_INVALID_TOOL_ROUNDS,
} from './tool-loop.ts';
export type { LoopHooks, LoopOptions, LoopProgress, LoopOutcome, LoopResult, ModelCallRecord, ToolRunner, ToolRunOutcome, ToolResultMessage } from './tool-loop.ts';
export { modelCallRow } from './model-call-row.ts';
export { buildSystemPrompt, DEFAULT_IDENTITY } from './system-prompt.ts';
export type { SystemPromptInput } from './system-prompt.ts';
export { createProvider, OpenAIProvider, AnthropicProvider } from './providers/index.ts';
export { PastSessionsRecall, recallTerms, withRecall } from './recall.ts';
export type { RecallProvider, RecallQuery } from './recall.ts';
export { toChatMessages } from './transcript-messages.ts';
export {
  contextWindowFor,
  thresholdTokens,
  estimateTokens,
  estimateRequestTokens,
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_COMPRESSION_THRESHOLD,
} from './compression/context-window.ts';
export { compactTranscript } from './compression/compact-transcript.ts';
export type { CompactionRequest, CompactionResult, OnSummaryFailure, Summariser } from './compression/compact-transcript.ts';
export { withoutOrphans, pruneToolOutputs, DUPLICATE_RESULT } from './compression/tool-output-pruning.ts';
export { SUMMARY_PREFIX, SUMMARY_SUFFIX, summaryIn, redactSecrets } from './compression/summary.ts';
export { FailoverProvider } from './failover/failover-provider.ts';
export type { FailoverEvent, FailoverOptions } from './failover/failover-provider.ts';
export { LocalCooldowns, SharedCooldowns } from './failover/key-cooldowns.ts';
export type { CooldownNotices, KeyCooldowns } from './failover/key-cooldowns.ts';
