import type { ChatMessage } from '../types.ts';
import { estimateMessageTokens } from './context-window.ts';

// Where to cut a transcript: a protected head, a middle to summarise, a protected tail. Hermes'
// shape (§3 steps 3-4): the head only on a lineage's first compaction, a token-budgeted tail that
// always holds the last user and last assistant message, never a tool call apart from its result.

const PROTECT_FIRST_N = 3;
const PROTECT_LAST_N = 20;
const TAIL_SHARE = 0.2;
const TAIL_SOFT_CEILING = 1.5;
const MIN_TAIL = Math.max(3, Math.min(PROTECT_LAST_N, 8));

export interface CompactionPlan {
  headEnd: number;
  tailStart: number;
}

/** A tool result belongs to the call before it: a boundary may not fall in front of one. */
function groupStart(messages: ChatMessage[], index: number): number {
  let i = index;
  while (i > 0 && i < messages.length && messages[i]!.role === 'tool') i--;
  return i;
}

function groupEnd(messages: ChatMessage[], index: number): number {
  let i = index;
  while (i < messages.length && messages[i]!.role === 'tool') i++;
  return i;
}

function lastIndexOf(messages: ChatMessage[], role: ChatMessage['role']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === role) return i;
  return -1;
}

export function planCompaction(messages: ChatMessage[], thresholdTokens: number, firstCompaction: boolean): CompactionPlan | undefined {
  const headEnd = firstCompaction ? groupEnd(messages, Math.min(PROTECT_FIRST_N, messages.length)) : 0;
  const budget = thresholdTokens * TAIL_SHARE;
  let tailStart = messages.length;
  let tokens = 0;
  while (tailStart > headEnd) {
    const cost = estimateMessageTokens(messages[tailStart - 1]!);
    const kept = messages.length - tailStart;
    if (kept >= MIN_TAIL && (tokens + cost > budget * TAIL_SOFT_CEILING || (tokens >= budget && kept >= PROTECT_LAST_N))) break;
    tokens += cost;
    tailStart--;
  }
  for (const role of ['user', 'assistant'] as const) {
    const last = lastIndexOf(messages, role);
    if (last >= 0) tailStart = Math.min(tailStart, last);
  }
  tailStart = groupStart(messages, Math.max(tailStart, headEnd));
  // Hermes' rule: fewer than head + 3 + 1 messages leaves nothing worth summarising.
  if (tailStart - headEnd < 1 || messages.length <= headEnd + 4) return undefined;
  return { headEnd, tailStart };
}
