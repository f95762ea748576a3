import type { ChatMessage, ToolDefinition } from '../types.ts';

// How big the model's window is, and when a session is near it. Hermes' constants
// (agent/context_compressor.py, model_metadata.py; ../shared/reference/hermes.md §3).

export const DEFAULT_CONTEXT_TOKENS = 128_000;
export const DEFAULT_COMPRESSION_THRESHOLD = 0.5;
/** Windows under 512K compress no earlier than at 75% (Hermes raises, never lowers, the share). */
const SMALL_WINDOW = 512_000;
const SMALL_WINDOW_FLOOR = 0.75;
/** Hermes never compresses below 64K tokens of history unless the window itself is smaller. */
const MINIMUM_THRESHOLD_TOKENS = 64_000;

/** Well-known windows by model name prefix; longest prefix wins. */
const KNOWN_WINDOWS: [prefix: string, tokens: number][] = [
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-5', 400_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4', 200_000],
  ['claude', 200_000],
  ['gemini-1.5', 1_000_000],
  ['gemini-2', 1_000_000],
  ['llama-3', 128_000],
  ['qwen', 128_000],
  ['deepseek', 128_000],
  ['mistral', 128_000],
];

/** The configured window, else the table's entry for the model, else 128,000. */
export function contextWindowFor(model: string, configured?: number): number {
  if (configured !== undefined) return configured;
  const name = model.toLowerCase().replace(/^.*\//, '');
  let best: [string, number] | undefined;
  for (const entry of KNOWN_WINDOWS) if (name.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  return best?.[1] ?? DEFAULT_CONTEXT_TOKENS;
}

/** The prompt size past which a session is compressed. */
export function thresholdTokens(window: number, share = DEFAULT_COMPRESSION_THRESHOLD): number {
  const effective = window < SMALL_WINDOW ? Math.max(share, SMALL_WINDOW_FLOOR) : share;
  const tokens = Math.max(Math.floor(window * effective), MINIMUM_THRESHOLD_TOKENS);
  // A model smaller than the floor must still be able to compress before it overflows.
  return tokens >= window ? Math.min(Math.floor(window * 0.85), window - 1) : tokens;
}

/**
 * A cheap estimate before the call (about four characters a token, as Hermes estimates); the
 * provider's reported prompt tokens replace it after the call.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

// A session's estimate is taken before every model call over the whole transcript; a message and a
// tool definition never change once made (the transcript cache and the tool registry hand out the
// same objects turn after turn), so each is weighed once, not once per turn.
const messageWeights = new WeakMap<ChatMessage, number>();
const definitionLengths = new WeakMap<ToolDefinition, number>();

export function estimateMessageTokens(message: ChatMessage): number {
  let weight = messageWeights.get(message);
  if (weight === undefined) {
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    weight = 4 + estimateTokens(message.content) + calls.reduce((sum, call) => sum + estimateTokens(call.name + call.arguments), 0);
    messageWeights.set(message, weight);
  }
  return weight;
}

/** The length of JSON.stringify(tools), from each definition's own length. */
function definitionsLength(tools: readonly ToolDefinition[]): number {
  let length = tools.length === 0 ? 2 : tools.length + 1;
  for (const tool of tools) {
    let own = definitionLengths.get(tool);
    if (own === undefined) {
      own = JSON.stringify(tool).length;
      definitionLengths.set(tool, own);
    }
    length += own;
  }
  return length;
}

export function estimateRequestTokens(system: string, messages: ChatMessage[], tools: ToolDefinition[]): number {
  return estimateTokens(system) + Math.ceil(definitionsLength(tools) / 4) + messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);
}
