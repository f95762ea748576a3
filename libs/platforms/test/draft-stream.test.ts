import { describe, expect, it } from 'vitest';
import { silentLogger } from '@herald/core';
import { DeliveryError } from '@herald/delivery';
import type { DraftCalls } from '@herald/delivery';
import { COMPRESSION_LINE, DRAFT_CURSOR, DraftStream } from '../src/draft-stream.ts';

// The pacing, rate limits and splitting every platform's drafts share (Telegram, Discord and
// Slack give only the three calls); the platforms themselves are tested end to end in
// test/chat-drafts.test.ts.

interface Call {
  kind: 'post' | 'edit' | 'remove';
  id: string;
  text: string;
  at: number;
}

function recordingCalls(maxChars: number, failures: Error[] = []): DraftCalls & { calls: Call[]; messages: Map<string, string> } {
  const calls: Call[] = [];
  const messages = new Map<string, string>();
  let next = 1;
  const fail = () => {
    const failure = failures.shift();
    if (failure) throw failure;
  };
  return {
    calls,
    messages,
    maxChars,
    async post(_target, text) {
      fail();
      const id = String(next++);
      messages.set(id, text);
      calls.push({ kind: 'post', id, text, at: performance.now() });
      return id;
    },
    async edit(_target, id, text) {
      calls.push({ kind: 'edit', id, text, at: performance.now() });
      fail();
      messages.set(id, text);
      return true;
    },
    async remove(_target, id) {
      calls.push({ kind: 'remove', id, text: '', at: performance.now() });
      messages.delete(id);
    },
  };
}

function draftOver(calls: DraftCalls, recorded: string[][] = []): DraftStream {
  return new DraftStream({
    calls,
    target: { chatId: '1' },
    messageIds: [],
    record: async (ids) => void recorded.push([...ids]),
    forget: async () => void recorded.push([]),
    mayStart: async () => true,
    pacing: { intervalMs: 100, minChars: 10 },
    logger: silentLogger,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function write(draft: DraftStream, text: string, pieceMs: number): Promise<void> {
  for (let i = 0; i < text.length; i += 5) {
    draft.take({ type: 'delta', text: text.slice(i, i + 5) });
    await sleep(pieceMs);
  }
}

describe('DraftStream', () => {
  it('posts the first words at once, then edits at most once per interval', async () => {
    const calls = recordingCalls(4096);
    const draft = draftOver(calls);
    const started = performance.now();
    await write(draft, 'word '.repeat(100), 5);
    await draft.settle();
    const elapsed = performance.now() - started;
    expect(calls.calls[0]?.kind).toBe('post');
    expect(calls.calls[0]!.at - started).toBeLessThan(50);
    const edits = calls.calls.filter((call) => call.kind === 'edit');
    expect(edits.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
    for (let i = 1; i < edits.length; i++) expect(edits[i]!.at - edits[i - 1]!.at).toBeGreaterThanOrEqual(95);
    expect(calls.calls.filter((call) => call.kind === 'post')).toHaveLength(1);
    expect([...calls.messages.values()].every((text) => text.endsWith(DRAFT_CURSOR))).toBe(true);
  });

  it('waits as long as a rate-limit answer says before the next edit', async () => {
    const calls = recordingCalls(4096, []);
    const draft = draftOver(calls);
    draft.take({ type: 'delta', text: 'first words ' });
    await sleep(20);
    calls.edit = (async (_target: Record<string, string>, id: string, text: string) => {
      calls.calls.push({ kind: 'edit', id, text, at: performance.now() });
      if (calls.calls.filter((call) => call.kind === 'edit').length === 1) throw new DeliveryError('429', { retryable: true, retryAfterMs: 600 });
      calls.messages.set(id, text);
      return true;
    }) as DraftCalls['edit'];
    await write(draft, 'more text arriving steadily '.repeat(10), 10);
    await sleep(700);
    await draft.settle();
    const edits = calls.calls.filter((call) => call.kind === 'edit');
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(edits[1]!.at - edits[0]!.at).toBeGreaterThanOrEqual(590);
  });

  it('continues in a new message when the text outgrows one, recording every id', async () => {
    const calls = recordingCalls(200);
    const recorded: string[][] = [];
    const draft = draftOver(calls, recorded);
    await write(draft, 'lorem ipsum dolor '.repeat(30), 2);
    await sleep(150);
    await draft.settle();
    const ids = [...calls.messages.keys()];
    expect(ids.length).toBeGreaterThanOrEqual(3);
    for (const text of calls.messages.values()) expect(text.length).toBeLessThanOrEqual(200);
    expect(recorded.at(-1)).toEqual(ids);
    // Only the last message is still being written.
    expect([...calls.messages.values()].filter((text) => text.endsWith(DRAFT_CURSOR))).toHaveLength(1);
  });

  it('shows a tool as one line replaced by the next, and takes the draft back on discard', async () => {
    const calls = recordingCalls(4096);
    const draft = draftOver(calls);
    draft.take({ type: 'delta', text: 'Looking that up.' });
    await sleep(20);
    draft.take({ type: 'tool', name: 'web_search', status: 'start' });
    await sleep(150);
    draft.take({ type: 'tool', name: 'web_extract', status: 'start' });
    await sleep(150);
    const [text] = [...calls.messages.values()];
    expect(text).toBe(`Looking that up.\n\n⚙️ web_extract…${DRAFT_CURSOR}`);
    await draft.discard();
    expect(calls.messages.size).toBe(0);
    draft.take({ type: 'delta', text: 'late text that must not be posted' });
    await sleep(150);
    expect(calls.calls.filter((call) => call.kind === 'post')).toHaveLength(1);
  });

  it('shows a compression as the same one line, replaced by the answer, and never one that ended before it could show', async () => {
    const quick = recordingCalls(4096);
    const unseen = draftOver(quick);
    unseen.take({ type: 'compression', status: 'start' });
    await sleep(20);
    unseen.take({ type: 'compression', status: 'done' });
    await sleep(150);
    expect(quick.calls).toEqual([]);

    const calls = recordingCalls(4096);
    const draft = draftOver(calls);
    draft.take({ type: 'compression', status: 'start' });
    await sleep(150);
    expect([...calls.messages.values()]).toEqual([`${COMPRESSION_LINE}${DRAFT_CURSOR}`]);
    draft.take({ type: 'compression', status: 'done' });
    draft.take({ type: 'delta', text: 'The summary is written; here is the answer.' });
    await sleep(150);
    await draft.settle();
    expect(calls.calls.filter((call) => call.kind === 'post')).toHaveLength(1);
    expect([...calls.messages.values()]).toEqual([`The summary is written; here is the answer.${DRAFT_CURSOR}`]);
  });
});
