import type { ImageInput } from '@herald/core';

/** One tool call as the model asked for it; `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type { ImageInput };

/**
 * The internal, provider-neutral conversation shape (OpenAI chat roles). Provider adapters convert
 * from it on the way out and back into it on the way in; nothing else sees a vendor format.
 */
export type ChatMessage =
  /** `images` only on the turn's own messages (attachments): history keeps the text line naming the file. */
  | { role: 'user'; content: string; images?: ImageInput[] }
  | { role: 'assistant'; content: string; tool_calls?: ToolCall[] }
  /** `images` only in the turn that made them (a screenshot): the transcript keeps the text. */
  | { role: 'tool'; content: string; tool_call_id: string; name?: string; images?: ImageInput[] };

/** A tool as offered to the model: JSON Schema parameters. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the provider served from its prompt cache. */
  cachedInputTokens: number;
  /** Input tokens written into the provider's cache (Anthropic cache_creation_input_tokens). */
  cacheWriteTokens: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface CompletionRequest {
  /** Session id: the stable cache key for providers that take one. */
  sessionId: string;
  system: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  signal?: AbortSignal;
  /**
   * When given, the provider streams the answer and hands each piece of text here as it arrives.
   * The result is the same as a non-streamed call's (text, tool calls, usage); a stream that breaks
   * mid-way throws like a failed call, so nothing half-received is ever returned.
   */
  onDelta?: (text: string) => void;
  /** A provider that tries again inside one call (failover) says so before the new try's deltas. */
  onRestart?: () => void;
}

export interface CompletionResult {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  model: string;
  /** The named provider that answered, when it differs from the Provider's own name (failover). */
  provider?: string;
  /** The environment variable naming the key that answered (failover); never the key. */
  keyName?: string;
}

export interface Provider {
  readonly name: string;
  readonly model: string;
  complete(request: CompletionRequest): Promise<CompletionResult>;
}
