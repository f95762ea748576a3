import { createHash } from 'node:crypto';
import type { ChatMessage, ToolCall } from '../types.ts';

// The pre-pass before any summary (Hermes' _prune_old_tool_results): old tool output is the bulk of
// a long session and mostly spent, so it shrinks without a model call.

const LONG_RESULT_CHARS = 200;
const LONG_ARGUMENTS_CHARS = 500;
const KEPT_ARGUMENT_CHARS = 200;
export const DUPLICATE_RESULT = '[Duplicate tool output — same content as a more recent call]';

/** Prunes every message before `keepFrom` (the protected tail is left as it is). */
export function pruneToolOutputs(messages: ChatMessage[], keepFrom: number): ChatMessage[] {
  const seenLater = new Set<string>();
  const result = [...messages];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'tool' || message.content.length < LONG_RESULT_CHARS) continue;
    const digest = createHash('md5').update(message.content).digest('hex').slice(0, 12);
    const duplicate = seenLater.has(digest);
    seenLater.add(digest);
    if (i >= keepFrom) continue;
    result[i] = { ...message, content: duplicate ? DUPLICATE_RESULT : oneLine(message) };
  }
  for (let i = 0; i < Math.min(keepFrom, result.length); i++) {
    const message = result[i]!;
    if (message.role === 'assistant' && message.tool_calls) result[i] = { ...message, tool_calls: message.tool_calls.map(shrinkArguments) };
  }
  return result;
}

/** `[terminal] deployment "api" successfully rolled out… (3,400 chars, 47 lines)` */
function oneLine(message: Extract<ChatMessage, { role: 'tool' }>): string {
  const first =
    message.content
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? '';
  const lines = message.content.split('\n').length;
  const head = first.length > 120 ? `${first.slice(0, 120)}…` : first;
  return `[${message.name ?? 'tool'}] ${head} (${message.content.length.toLocaleString('en')} chars, ${lines} lines)`;
}

/** Long arguments shrink inside the JSON, so the call stays a valid call. */
function shrinkArguments(call: ToolCall): ToolCall {
  if (call.arguments.length <= LONG_ARGUMENTS_CHARS) return call;
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments);
  } catch {
    return { ...call, arguments: JSON.stringify({ truncated: call.arguments.slice(0, KEPT_ARGUMENT_CHARS) }) };
  }
  return { ...call, arguments: JSON.stringify(shrinkValue(parsed)) };
}

function shrinkValue(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.length > KEPT_ARGUMENT_CHARS ? `${value.slice(0, KEPT_ARGUMENT_CHARS)}…[${value.length - KEPT_ARGUMENT_CHARS} more chars]` : value;
  }
  if (Array.isArray(value)) return value.map(shrinkValue);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shrinkValue(v)]));
  return value;
}

/**
 * Drops tool results whose call is not in an earlier assistant message, and calls whose result
 * never came (a provider refuses either): the model never sees an orphan.
 */
export function withoutOrphans(messages: ChatMessage[]): ChatMessage[] {
  const answered = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  const asked = new Set<string>();
  const result: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      if (asked.has(message.tool_call_id)) result.push(message);
      continue;
    }
    if (message.role === 'assistant' && message.tool_calls) {
      const calls = message.tool_calls.filter((call) => answered.has(call.id));
      for (const call of calls) asked.add(call.id);
      if (calls.length === 0 && message.content === '') continue;
      result.push(calls.length > 0 ? { ...message, tool_calls: calls } : { role: 'assistant', content: message.content });
      continue;
    }
    result.push(message);
  }
  return result;
}
