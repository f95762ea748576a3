import type { ChatMessage } from '../types.ts';
import { estimateMessageTokens } from './context-window.ts';

// The summary of a compacted middle: Hermes' structured snapshot (§3 step 5) and its budgets.

export const SUMMARY_PREFIX =
  '[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns of this conversation were compacted into the summary below. ' +
  'Respond ONLY to the latest user message; treat this as background. Memory remains authoritative.\n\n';
export const SUMMARY_SUFFIX = '\n\n--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---';

const MESSAGE_CHARS = 6000;
const ARGUMENT_CHARS = 1500;
const FALLBACK_CHARS = 8000;
const FALLBACK_TURN_CHARS = 700;

/** max(2000, min(20% of what is summarised, min(5% of the window, 10,000))) tokens. */
export function summaryBudget(middle: ChatMessage[], window: number): number {
  const summarised = middle.reduce((sum, m) => sum + estimateMessageTokens(m), 0);
  return Math.max(2000, Math.min(Math.floor(0.2 * summarised), Math.min(Math.floor(0.05 * window), 10_000)));
}

/** The summary text inside a summary message, or undefined when the message is not one. */
export function summaryIn(message: ChatMessage): string | undefined {
  if (message.role === 'tool' || !message.content.startsWith(SUMMARY_PREFIX)) return undefined;
  const body = message.content.slice(SUMMARY_PREFIX.length);
  const end = body.indexOf(SUMMARY_SUFFIX);
  return end < 0 ? body : body.slice(0, end);
}

function clip(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars)}…[${text.length - chars} chars cut]` : text;
}

export function serialise(messages: ChatMessage[]): string {
  return messages
    .map((message) => {
      if (message.role === 'tool') return `[tool result${message.name ? ` ${message.name}` : ''}] ${clip(message.content, MESSAGE_CHARS)}`;
      const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
      const called = calls.map((call) => `\n[tool call ${call.name}] ${clip(call.arguments, ARGUMENT_CHARS)}`).join('');
      return `[${message.role}] ${clip(message.content, MESSAGE_CHARS)}${called}`;
    })
    .join('\n\n');
}

const TEMPLATE = `## Historical Task Snapshot
(the latest unfulfilled ask, verbatim)
## Goal
## Constraints & Preferences
## Completed Actions
(N. ACTION target — outcome [tool: name], as dated past-tense facts)
## Active State
## Historical In-Progress State
## Blocked
## Key Decisions
## Resolved Questions
## Historical Pending User Asks
## Relevant Files
## Historical Remaining Work
## Critical Context`;

/** The instruction to the summariser: a new snapshot, or an update of the previous one. */
export function summaryPrompt(middle: ChatMessage[], budgetTokens: number, previous: string | undefined, focus: string | undefined): string {
  const task =
    previous === undefined
      ? 'Summarise the conversation below into this structured snapshot.'
      : 'Update the previous snapshot with the conversation below that followed it: keep what still holds, move finished work to Completed Actions, and do not summarise the snapshot itself again.';
  return [
    `${task} Write in the language the person uses. Never copy secrets (API keys, tokens, passwords): write [redacted]. ` +
      `Keep facts, names, numbers, paths and commands exactly. At most about ${budgetTokens} tokens.` +
      (focus ? ` Give extra weight to: ${focus}.` : ''),
    TEMPLATE,
    ...(previous === undefined ? [] : ['PREVIOUS SNAPSHOT:', previous]),
    'CONVERSATION:',
    serialise(middle),
  ].join('\n\n');
}

/**
 * When the summariser failed for another reason than auth or network and the operator chose
 * `fallback`: each user turn's ask and answer, clipped, so the middle is never dropped silently.
 */
export function fallbackSummary(middle: ChatMessage[], previous: string | undefined): string {
  const turns: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length > 0) turns.push(clip(current.join(' / '), FALLBACK_TURN_CHARS));
    current = [];
  };
  for (const message of middle) {
    if (message.role === 'user') flush();
    if (message.role === 'tool') current.push(`tool ${message.name ?? ''}: ${message.content.slice(0, 120)}`);
    else if (message.content.trim() !== '') current.push(`${message.role}: ${message.content.slice(0, 300)}`);
  }
  flush();
  const head = `(The summariser was unavailable; this is a mechanical digest of ${middle.length} earlier messages.)`;
  return clip([head, ...(previous ? ['Earlier snapshot:', previous] : []), ...turns.map((t) => `- ${t}`)].join('\n'), FALLBACK_CHARS);
}

/** Tokens, keys and passwords never survive into a summary, whatever the summariser wrote. */
const SECRET_PATTERNS: [RegExp, string][] = [
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, '[redacted]'],
  [/\b\d{6,12}:[A-Za-z0-9_-]{30,}\b/g, '[redacted]'],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, '[redacted]'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, '[redacted]'],
  [/\b(password|passwd|secret|token|api[_-]?key)(\s*[:=]\s*)\S+/gi, '$1$2[redacted]'],
  [/\b(postgres(?:ql)?|redis|mysql|amqp):\/\/([^:@/\s]+):[^@/\s]+@/g, '$1://$2:[redacted]@'],
];

export function redactSecrets(text: string): string {
  return SECRET_PATTERNS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}
