import { describe, expect, it } from 'vitest';
import {
  compactTranscript,
  contextWindowFor,
  DUPLICATE_RESULT,
  estimateRequestTokens,
  ProviderError,
  pruneToolOutputs,
  redactSecrets,
  SUMMARY_PREFIX,
  summaryIn,
  thresholdTokens,
  withoutOrphans,
} from '@herald/agent';
import type { ChatMessage, Summariser, ToolDefinition } from '@herald/agent';

function chat(turns: number, answerChars = 400): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `question ${i}` });
    messages.push({ role: 'assistant', content: '', tool_calls: [{ id: `c${i}`, name: 'terminal', arguments: JSON.stringify({ command: `ls ${i}` }) }] });
    messages.push({ role: 'tool', content: `output ${i} `.repeat(60), tool_call_id: `c${i}`, name: 'terminal' });
    messages.push({ role: 'assistant', content: `answer ${i} `.padEnd(answerChars, 'x') });
  }
  return messages;
}

function orphans(messages: ChatMessage[]): string[] {
  const asked = new Set<string>();
  const problems: string[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) asked.add(call.id);
    if (m.role === 'tool' && !asked.has(m.tool_call_id)) problems.push(`result ${m.tool_call_id} without call`);
  }
  const answered = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  for (const id of asked) if (!answered.has(id)) problems.push(`call ${id} without result`);
  return problems;
}

const summariser = (answer = 'SNAPSHOT'): Summariser & { prompts: string[] } => {
  const prompts: string[] = [];
  return Object.assign(
    async (prompt: string) => {
      prompts.push(prompt);
      return answer;
    },
    { prompts },
  );
};

const base = { thresholdTokens: 4000, contextTokens: 64_000, onFailure: 'fallback' as const };

describe('the context window', () => {
  it('comes from the setting, else the table of known models, else 128,000', () => {
    expect(contextWindowFor('gpt-4o-mini', 64_000)).toBe(64_000);
    expect(contextWindowFor('anthropic/claude-sonnet-4')).toBe(200_000);
    expect(contextWindowFor('gpt-4.1-mini')).toBe(1_047_576);
    expect(contextWindowFor('my-local-model')).toBe(128_000);
  });

  it("is compressed at Hermes' threshold: 75% under 512K, never below 64K unless the window is smaller", () => {
    expect(thresholdTokens(128_000, 0.5)).toBe(96_000);
    expect(thresholdTokens(1_000_000, 0.5)).toBe(500_000);
    expect(thresholdTokens(64_000, 0.5)).toBe(54_400);
  });
});

describe('the estimate of a request', () => {
  // Each message's and each definition's weight is kept after the first turn weighs it; the sum
  // must stay the plain formula: a quarter token a character, four a message, the tools as sent.
  const plain = (system: string, messages: ChatMessage[], tools: ToolDefinition[]) =>
    Math.ceil(system.length / 4) +
    Math.ceil(JSON.stringify(tools).length / 4) +
    messages.reduce(
      (sum, m) => sum + 4 + Math.ceil(m.content.length / 4) + (m.role === 'assistant' ? (m.tool_calls ?? []) : []).reduce((s, c) => s + Math.ceil((c.name + c.arguments).length / 4), 0),
      0,
    );
  const tool = (name: string, description: string): ToolDefinition => ({ name, description, parameters: { type: 'object', properties: { q: { type: 'string', description: 'ü "quoted"' } } } });

  it('is the sum of what the system prompt, the tools and every message weigh, turn after turn', () => {
    const messages = chat(30);
    const tools = [tool('terminal', 'Runs a command.'), tool('web_search', 'Searches the web\nfor a query.')];
    for (const toolsNow of [[], tools.slice(0, 1), tools]) {
      expect(estimateRequestTokens('You are Herald.', messages, toolsNow)).toBe(plain('You are Herald.', messages, toolsNow));
    }
    // The next turn: the same objects again, two new messages, the tools in a new array.
    const next: ChatMessage[] = [...messages, { role: 'user', content: 'and now?' }, { role: 'assistant', content: 'done' }];
    expect(estimateRequestTokens('', next, [...tools])).toBe(plain('', next, tools));
  });
});

describe('compacting a transcript', () => {
  it('keeps the head on the first compaction, the last user and assistant message, and no orphaned tool result', async () => {
    const messages = chat(30);
    const summarise = summariser();
    const result = await compactTranscript({ ...base, messages, firstCompaction: true, summarise });
    expect(result.kind).toBe('compacted');
    if (result.kind !== 'compacted') return;
    expect(result.messages.slice(0, 3)).toEqual(messages.slice(0, 3).map((m, i) => (i === 2 ? result.messages[2] : m)));
    expect(result.messages.at(-1)).toEqual(messages.at(-1));
    expect(result.messages.some((m) => m.role === 'user' && m.content === 'question 29')).toBe(true);
    expect(orphans(result.messages)).toEqual([]);
    expect(result.messages.length).toBeLessThan(messages.length / 2);
    expect(result.messages.filter((m) => summaryIn(m) !== undefined)).toHaveLength(1);
  });

  it('drops the head on later compactions and updates the previous summary instead of summarising it', async () => {
    const first = await compactTranscript({ ...base, messages: chat(30), firstCompaction: true, summarise: summariser('FIRST SNAPSHOT') });
    if (first.kind !== 'compacted') throw new Error('expected a compaction');
    const grown = [
      ...first.messages,
      ...chat(30).map((m) =>
        m.role === 'tool' ? { ...m, tool_call_id: `x${m.tool_call_id}` } : m.role === 'assistant' && m.tool_calls ? { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, id: `x${c.id}` })) } : m,
      ),
    ];
    const summarise = summariser('SECOND SNAPSHOT');
    const second = await compactTranscript({ ...base, messages: grown, firstCompaction: false, summarise });
    if (second.kind !== 'compacted') throw new Error('expected a compaction');
    expect(summarise.prompts[0]).toContain('PREVIOUS SNAPSHOT:\n\nFIRST SNAPSHOT');
    expect(summarise.prompts[0]).not.toContain(SUMMARY_PREFIX);
    expect(second.messages[0]!.content).toContain('SECOND SNAPSHOT');
    expect(orphans(second.messages)).toEqual([]);
  });

  it('changes nothing when the summariser cannot be reached (auth, network)', async () => {
    const messages = chat(30);
    const refuse: Summariser = async () => {
      throw new ProviderError('401 Unauthorized', { kind: 'auth', status: 401 });
    };
    const result = await compactTranscript({ ...base, messages, firstCompaction: true, summarise: refuse });
    expect(result).toMatchObject({ kind: 'unchanged', unavailable: true });
  });

  it("falls back to a mechanical digest of the middle on other failures, or changes nothing with 'abort'", async () => {
    const broken: Summariser = async () => {
      throw new ProviderError('500', { kind: 'server', status: 500 });
    };
    const fallback = await compactTranscript({ ...base, messages: chat(30), firstCompaction: true, summarise: broken });
    expect(fallback).toMatchObject({ kind: 'compacted', fallback: true });
    if (fallback.kind === 'compacted') expect(fallback.summary).toContain('question 5');
    const abort = await compactTranscript({ ...base, messages: chat(30), firstCompaction: true, summarise: broken, onFailure: 'abort' });
    expect(abort).toMatchObject({ kind: 'unchanged', unavailable: false });
  });

  it('has nothing to do for a short chat', async () => {
    expect(await compactTranscript({ ...base, messages: chat(1), firstCompaction: true, summarise: summariser() })).toEqual({ kind: 'nothing-to-compact' });
  });

  it('redacts secrets the summariser copied', async () => {
    const result = await compactTranscript({
      ...base,
      messages: chat(30),
      firstCompaction: true,
      summarise: summariser('key sk-abcdefghijklmnopqrstuv, db postgres://app:hunter2@db/herald, password: swordfish'),
    });
    if (result.kind !== 'compacted') throw new Error('expected a compaction');
    expect(result.summary).not.toMatch(/sk-abc|hunter2|swordfish/);
    expect(redactSecrets('bot 123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0')).toBe('bot [redacted]');
  });
});

describe('pruning old tool output', () => {
  it('collapses duplicates and long results to one line, and shrinks long arguments inside valid JSON', () => {
    const long = 'line one of a long result\n'.repeat(30);
    const messages: ChatMessage[] = [
      { role: 'assistant', content: '', tool_calls: [{ id: 'a', name: 'write_file', arguments: JSON.stringify({ path: 'x', content: 'y'.repeat(900) }) }] },
      { role: 'tool', content: long, tool_call_id: 'a', name: 'write_file' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'b', name: 'terminal', arguments: '{}' }] },
      { role: 'tool', content: long, tool_call_id: 'b', name: 'terminal' },
    ];
    const pruned = pruneToolOutputs(messages, 3);
    expect(pruned[1]).toMatchObject({ content: DUPLICATE_RESULT });
    expect(pruned[3]).toEqual(messages[3]);
    const args = (pruned[0] as { tool_calls: { arguments: string }[] }).tool_calls[0]!.arguments;
    expect(JSON.parse(args).content).toMatch(/^y{200}…\[700 more chars\]$/);
    const single = pruneToolOutputs([messages[2]!, messages[3]!, { role: 'user', content: 'next' }], 2);
    expect(single[1]!.content).toMatch(/^\[terminal\] line one of a long result \(780 chars, 31 lines\)$/);
  });

  it('never lets an orphaned call or result through', () => {
    const messages: ChatMessage[] = [
      { role: 'tool', content: 'orphan', tool_call_id: 'gone' },
      { role: 'assistant', content: 'let me look', tool_calls: [{ id: 'k', name: 'terminal', arguments: '{}' }] },
      { role: 'user', content: 'hello' },
    ];
    expect(withoutOrphans(messages)).toEqual([
      { role: 'assistant', content: 'let me look' },
      { role: 'user', content: 'hello' },
    ]);
  });
});
