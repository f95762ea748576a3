import { ProviderError } from '../provider-error.ts';
import type { ChatMessage } from '../types.ts';
import { planCompaction } from './compaction-plan.ts';
import { fallbackSummary, redactSecrets, SUMMARY_PREFIX, SUMMARY_SUFFIX, summaryBudget, summaryIn, summaryPrompt } from './summary.ts';
import { pruneToolOutputs, withoutOrphans } from './tool-output-pruning.ts';

/** Calls the auxiliary (summary) model: one user message in, its text out. */
export type Summariser = (prompt: string, maxTokens: number) => Promise<string>;

export type OnSummaryFailure = 'fallback' | 'abort';

export interface CompactionRequest {
  messages: ChatMessage[];
  thresholdTokens: number;
  contextTokens: number;
  /** The head is protected only on a lineage's first compaction (Hermes #11996). */
  firstCompaction: boolean;
  focus?: string | undefined;
  summarise: Summariser;
  onFailure: OnSummaryFailure;
}

export type CompactionResult =
  | { kind: 'compacted'; messages: ChatMessage[]; summary: string; summarised: number; fallback: boolean }
  | { kind: 'nothing-to-compact' }
  /** The summariser could not be reached (auth, network) or failed with onFailure 'abort': nothing changed. */
  | { kind: 'unchanged'; reason: string; unavailable: boolean };

/** An auth or network failure means "not now": the session goes on as it was. */
function unavailable(error: unknown): boolean {
  if (!ProviderError.isInstance(error)) return false;
  return error.kind === 'auth' || error.kind === 'connection' || error.kind === 'timeout';
}

/**
 * Hermes' compaction in one pure step over a transcript: prune old tool output, keep head and
 * tail, summarise the middle (updating an earlier summary rather than summarising it again), and
 * put the summary between them. Nothing is written here: the caller makes the child session.
 */
export async function compactTranscript(request: CompactionRequest): Promise<CompactionResult> {
  const plan = planCompaction(request.messages, request.thresholdTokens, request.firstCompaction);
  if (!plan) return { kind: 'nothing-to-compact' };
  const pruned = pruneToolOutputs(request.messages, plan.tailStart);
  const head = pruned.slice(0, plan.headEnd);
  const middleWithSummary = pruned.slice(plan.headEnd, plan.tailStart);
  const previous = middleWithSummary.map(summaryIn).find((text) => text !== undefined);
  const middle = middleWithSummary.filter((message) => summaryIn(message) === undefined);
  const tail = request.messages.slice(plan.tailStart);
  let summary: string;
  let fallback = false;
  try {
    const budget = summaryBudget(middle, request.contextTokens);
    summary = (await request.summarise(summaryPrompt(middle, budget, previous, request.focus), budget)).trim();
    if (summary === '') throw new Error('the summariser answered with nothing');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (unavailable(error) || request.onFailure === 'abort') return { kind: 'unchanged', reason, unavailable: unavailable(error) };
    summary = fallbackSummary(middle, previous);
    fallback = true;
  }
  summary = redactSecrets(summary);
  return { kind: 'compacted', messages: withoutOrphans(assemble(head, summary, tail)), summary, summarised: middle.length, fallback };
}

/**
 * The summary goes between head and tail in the role that keeps roles alternating; when both
 * roles would collide, it is merged into the first tail message (Hermes §3 step 7).
 */
function assemble(head: ChatMessage[], summary: string, tail: ChatMessage[]): ChatMessage[] {
  const text = `${SUMMARY_PREFIX}${summary}${SUMMARY_SUFFIX}`;
  const before = head.at(-1)?.role;
  const after = tail[0]?.role;
  const role: 'user' | 'assistant' = before === 'user' ? 'assistant' : 'user';
  if (after !== role) return [...head, { role, content: text }, ...tail];
  const first = tail[0]!;
  return [...head, { ...first, content: `${text}\n\n${first.content}` }, ...tail.slice(1)];
}
