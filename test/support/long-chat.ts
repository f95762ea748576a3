import { expect } from 'vitest';
import type { FakeReply, FakeRequest } from './fake-llm.ts';

// Helpers of the long-conversation tests: filler text, the summariser's requests, and the check
// that no request ever carries a tool result without its call (or a call without its result).

/** About `chars` characters of words that differ per seed, so no two messages are the same. */
export function longText(seed: string, chars: number): string {
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const word = `${seed.replace(/\s+/g, '-')}-${i}`;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

export { isSummaryRequest } from './fake-llm.ts';

/** A summariser that keeps every sentence matching `keep`, from the conversation and the previous snapshot. */
export function summariserThatKeeps(request: FakeRequest, keep: RegExp): FakeReply {
  const sentences = request.lastUserText.match(new RegExp(`[^.\\n]*${keep.source}[^.\\n]*`, 'gi')) ?? [];
  const kept = [...new Set(sentences.map((sentence) => sentence.trim()))].filter((s) => !s.startsWith('Give extra weight'));
  return { text: ['## Goal', 'Carry on with the conversation.', '## Critical Context', ...kept.map((s) => `- ${s}`)].join('\n') };
}

/** Every tool result follows the assistant step that called it, and every call has its result. */
export function assertNoOrphans(request: FakeRequest): void {
  const asked = new Set<string>();
  const answered = new Set(request.messages.flatMap((m) => (m.role === 'tool' && m.toolCallId ? [m.toolCallId] : [])));
  for (const message of request.messages) {
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) {
        expect(answered.has(call.id), `call ${call.id} has no result`).toBe(true);
        asked.add(call.id);
      }
    }
    if (message.role === 'tool') expect(asked.has(message.toolCallId ?? ''), `result ${message.toolCallId} has no call before it`).toBe(true);
  }
}
