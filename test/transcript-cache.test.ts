import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { loadTranscript, loadTranscriptState, messageWeight, TranscriptCache } from '@herald/transcript';
import type { StoredMessage } from '@herald/transcript';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeHandler, FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import type { Db } from '@herald/db';

const SEEDED = 300;

/** A `todo` call on every other turn's first step, then the answer: tool messages in the transcript too. */
const handler: FakeHandler = (request) => {
  const lastUser = request.messages.map((m) => m.role).lastIndexOf('user');
  const stepped = request.messages.slice(lastUser + 1).some((m) => m.role === 'tool');
  const turn = Number(/turn (\d+)/.exec(request.lastUserText)?.[1] ?? 0);
  if (turn % 2 === 1 && !stepped) return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: `t${turn}`, content: `item ${turn}`, status: 'pending' }], merge: true } }] };
  return { text: `answer to ${request.lastUserText}` };
};

async function sessionOf(db: Db, chatId: string): Promise<string> {
  const row = await db.selectFrom('sessions').select('id').where('chat_id', '=', chatId).executeTakeFirstOrThrow();
  return row.id;
}

async function seed(db: Db, sessionId: string, count: number): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `earlier message ${i} \u00e9 "quoted"` }));
  await sql`SELECT herald_append_messages(${sessionId}::uuid, NULL, ${JSON.stringify(messages)}::jsonb)`.execute(db);
}

async function send(stack: Stack, chatId: string, text: string): Promise<void> {
  const response = await stack.post('/v1/messages?wait=30', { chat_id: chatId, user_id: 'u1', text });
  expect(response.status).toBe(200);
}

/**
 * What the model was sent, with the fake's random call ids replaced by their order of appearance
 * and the minute the conversation started blanked (the two runs may straddle a minute).
 */
function normalised(requests: FakeRequest[]): string {
  const ids = new Map<string, string>();
  const text = JSON.stringify(requests.map((r) => ({ system: r.system, messages: r.body.messages, tools: r.body.tools }))).replace(
    /Conversation started \d{4}-\d\d-\d\d \d\d:\d\d UTC/g,
    'Conversation started (minute) UTC',
  );
  return text.replace(/call_[A-Za-z0-9_-]+/g, (id) => {
    if (!ids.has(id)) ids.set(id, `call#${ids.size}`);
    return ids.get(id) ?? id;
  });
}

/** A long session driven through a stack: its model requests, in order. */
async function longSession(stack: Stack, fake: FakeLLM): Promise<FakeRequest[]> {
  await send(stack, 'long', 'turn 0');
  const sessionId = await sessionOf(stack.database.db, 'long');
  await seed(stack.database.db, sessionId, SEEDED);
  for (let turn = 1; turn <= 6; turn++) await send(stack, 'long', `turn ${turn}`);
  return fake.requests.filter((r) => r.sessionKey === sessionId);
}

describe("a worker's transcript cache (issue 41 point 6)", () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const stack of stacks) await stack.stop();
  });

  it('sends the model byte for byte what a worker without it sends, over a long session on two workers', async () => {
    const runs: string[] = [];
    // Cached on two workers (turns land on either, so one often runs after the other), then uncached.
    for (const [workers, env] of [
      [2, {}],
      [1, { HERALD_TRANSCRIPT_CACHE_MESSAGES: '0' }],
    ] as const) {
      const fake = await startFakeOpenAI({ handler });
      const stack = await startStack({ model: fake, workers, env: { ...env } });
      stacks.push(stack);
      const requests = await longSession(stack, fake);
      expect(requests.length).toBeGreaterThanOrEqual(10);
      expect(requests.at(-1)?.messages.length).toBeGreaterThan(SEEDED);
      runs.push(normalised(requests));
    }
    expect(runs[0]).toBe(runs[1]);
  });
});

describe('loadTranscriptState with a cache', () => {
  let stack: Stack;
  let db: Db;
  let sessionId: string;
  beforeAll(async () => {
    stack = await startStack({ model: await startFakeOpenAI() });
    db = stack.database.db;
    await send(stack, 'reads', 'turn 0');
    sessionId = await sessionOf(db, 'reads');
    await seed(db, sessionId, 50);
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('reads what another worker appended since its last read, and equals a read without cache', async () => {
    const mine = new TranscriptCache(10_000);
    const first = await loadTranscriptState(db, sessionId, mine);
    expect(first.messages).toEqual((await loadTranscriptState(db, sessionId)).messages);
    // Another worker ran the next turns: this one's copy is behind.
    await send(stack, 'reads', 'turn 1');
    await seed(db, sessionId, 3);
    const later = await loadTranscriptState(db, sessionId, mine);
    expect(later.messages.length).toBe(first.messages.length + 5);
    expect(later.messages).toEqual(await loadTranscript(db, sessionId));
    expect(later.lastInputTokens).toBe((await loadTranscriptState(db, sessionId)).lastInputTokens);
  });

  it('does not trust a copy whose last message is not in the database (rolled back, or another database)', async () => {
    const cache = new TranscriptCache(10_000);
    const truth = await loadTranscript(db, sessionId);
    const ghost = { ...truth[truth.length - 1]!, id: '999999999', content: 'never committed' };
    cache.set(sessionId, [...truth.slice(0, -1), ghost]);
    expect(await loadTranscript(db, sessionId, cache)).toEqual(truth);
    expect(cache.get(sessionId)).toEqual(truth);
  });

  it('keeps at most its bound, least recently used out first; 0 keeps nothing', async () => {
    const cache = new TranscriptCache(10);
    await loadTranscript(db, sessionId, cache);
    expect(cache.heldMessages).toBe(0);
    const roomy = new TranscriptCache(1_000);
    await loadTranscript(db, sessionId, roomy);
    expect(roomy.heldMessages).toBe((await loadTranscript(db, sessionId)).length);
    const off = new TranscriptCache(0);
    await loadTranscript(db, sessionId, off);
    expect(off.heldMessages).toBe(0);
  });

  it('keeps at most its bound in bytes too, least recently used out first, and weighs a longer copy only by what it adds', () => {
    const long = (seq: number): StoredMessage => ({ id: String(seq), seq, turnId: null, role: 'user', content: 'x'.repeat(1000), createdAt: new Date(0) });
    const weight = messageWeight(long(1));
    const cache = new TranscriptCache(1_000, 3 * weight);
    for (const session of ['a', 'b', 'c']) cache.set(session, [long(1)]);
    expect(cache.heldBytes).toBe(3 * weight);
    cache.get('a');
    cache.set('d', [long(1)]);
    // Over the bound: the least recently used session goes.
    expect(cache.get('b')).toBeUndefined();
    expect(cache.heldBytes).toBe(3 * weight);
    // A longer copy of a cached transcript weighs what it adds; c is now the least recently used.
    cache.set('a', [...cache.get('a')!, long(2)]);
    expect(cache.get('c')).toBeUndefined();
    expect(cache.get('a')).toHaveLength(2);
    expect(cache.heldBytes).toBe(3 * weight);
    // A transcript over the bound alone is not kept, and costs the others nothing.
    cache.set('e', [long(1), long(2), long(3), long(4)]);
    expect(cache.get('e')).toBeUndefined();
    expect(cache.heldMessages).toBe(3);
  });

  it('is not filled inside a transaction, whose rows may roll back', async () => {
    const cache = new TranscriptCache(10_000);
    await db.transaction().execute(async (trx) => loadTranscript(trx, sessionId, cache));
    expect(cache.heldMessages).toBe(0);
  });
});
