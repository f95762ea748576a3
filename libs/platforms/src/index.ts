// The package's entry is the platform contract and what every platform shares; it names no
// platform (test/platform-names.test.ts). Each platform's own names are reached through its folder's
// entry, @herald/platforms/<name> (package.json "exports"), and the rest of Herald reaches a platform
// through the registry of adapters (PLATFORM_ADAPTERS, DELIVERY_ADAPTERS).
export { splitMarkdown } from './markdown-split.ts';
export { handleChatInbound, isAllowed, REFUSAL_TEXT } from './chat-inbound.ts';
export type { ChatInbound, ChatInboundDependencies, ChatInboundOutcome } from './chat-inbound.ts';
export { LeasedTask } from './leased-task.ts';
export type { LeasedTaskOptions } from './leased-task.ts';
export { TypingIndicator } from './typing-indicator.ts';
export { COMPRESSION_LINE, DraftStream, DRAFT_CURSOR, DEFAULT_PACING } from './draft-stream.ts';
export type { DraftPacing, DraftStreamOptions } from './draft-stream.ts';
export { DraftStreams } from './draft-streams.ts';
export type { DraftStreamsOptions } from './draft-streams.ts';
export { defineAdapter, defineDeliveryAdapter } from './platform-adapter.ts';
export type {
  AnyDeliveryAdapter,
  AnyPlatformAdapter,
  ConfiguredCalls,
  DeliveryAdapter,
  DeliveryAdapterSpec,
  InboundDependencies,
  InboundHandle,
  PlatformAdapter,
  PlatformAdapterSpec,
  PlatformWebhook,
  RateLimitRules,
  WebhookAnswer,
} from './platform-adapter.ts';
export { DELIVERY_ADAPTERS, PLATFORM_ADAPTERS } from './platform-adapters.ts';
