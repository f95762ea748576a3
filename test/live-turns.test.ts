import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, startFakeAnthropic } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { isSummaryRequest, longText } from './support/long-chat.ts';
import { modelEnv, startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { collectSse, readSse, readUntil } from './support/sse-client.ts';
import type { SseEvent } from './support/sse-client.ts';

const json = (event: SseEvent) => JSON.parse(event.data) as any;
const deltas = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => json(e).text as string);

function streamRequest(stack: Stack, body: unknown): Promise<Response> {
  return fetch(`${stack.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
}

function follow(stack: Stack, eventId: string, lastEventId?: string): Promise<Response> {
  return fetch(`${stack.url}/v1/events/${eventId}/stream`, {
    headers: { authorization: `Bearer ${TEST_TOKEN}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
  });
}

const LONG = 'The dashboard is red because the p99 latency of the checkout service crossed its objective after the deploy at nine.';

describe.each([
  ['OpenAI', startFakeOpenAI],
  ['Anthropic', startFakeAnthropic],
] as const)('live turns over server-sent events (%s wire)', (_name, startFake) => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFake({ chunkDelayMs: 15 });
    stack = await startStack({ model: fake });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('streams deltas before done, and they join to the committed reply', async () => {
    fake.handler = () => ({ text: LONG });
    const response = await streamRequest(stack, { chat_id: 'sse-1', user_id: 'u1', text: 'why is it red?' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const eventId = response.headers.get('x-herald-event-id');
    expect(eventId).toBeTruthy();
    const events = await collectSse(response);
    const done = events.find((e) => e.event === 'done');
    expect(done).toBeDefined();
    const texts = deltas(events);
    // Streamed as it was written: several pieces, every one of them before done.
    expect(texts.length).toBeGreaterThan(3);
    expect(events.findIndex((e) => e.event === 'done')).toBe(events.length - 1);
    expect(texts.join('')).toBe(LONG);
    expect(json(done!)).toMatchObject({ event_id: eventId, reply: { text: LONG } });
    const stored = await stack.get(`/v1/events/${eventId}`);
    expect(stored.body.reply.text).toBe(texts.join(''));
    // The model was asked for a stream, and the usage stored is the one it reported.
    expect(fake.requests.at(-1)?.stream).toBe(true);
    const calls = await stack.database.db.selectFrom('model_calls').select(['input_tokens', 'output_tokens']).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(calls.input_tokens).toBe(fake.requests.at(-1)!.promptTokens);
    expect(calls.output_tokens).toBeGreaterThan(0);
  });

  it('shows tool calls starting and ending, assembles streamed tool arguments, and answers', async () => {
    fake.handler = (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user') return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: 'check the deploy log', status: 'pending' }] } }] };
      return { text: `noted: ${last?.content.includes('check the deploy log') ? 'yes' : 'no'}` };
    };
    const events = await collectSse(await streamRequest(stack, { chat_id: 'sse-tool', user_id: 'u1', text: 'plan it' }));
    const tools = events.filter((e) => e.event === 'tool').map(json);
    expect(tools).toEqual([
      { name: 'todo', status: 'start' },
      { name: 'todo', status: 'end' },
    ]);
    expect(deltas(events).join('')).toBe('noted: yes');
    expect(json(events.at(-1)!).reply.text).toBe('noted: yes');
  });

  it('resumes with Last-Event-ID without gaps or repeats, through GET /v1/events/:id/stream', async () => {
    fake.handler = () => ({ text: LONG, chunkDelayMs: 40 });
    const response = await streamRequest(stack, { chat_id: 'sse-resume', user_id: 'u1', text: 'again' });
    const eventId = response.headers.get('x-herald-event-id')!;
    // Read three deltas, then drop the connection.
    const first: SseEvent[] = [];
    const reader = readSse(response);
    for await (const event of reader) {
      if (event.event === 'delta') first.push(event);
      if (first.length === 3) break;
    }
    await reader.return(undefined);
    const lastId = first.at(-1)!.id!;
    expect(lastId).toBeTruthy();
    const rest = await collectSse(await follow(stack, eventId, lastId));
    expect(rest.at(-1)?.event).toBe('done');
    expect([...deltas(first), ...deltas(rest)].join('')).toBe(LONG);
    // A follower from the start sees the whole answer too, even after the turn ended.
    const replay = await collectSse(await follow(stack, eventId));
    expect(deltas(replay).join('')).toBe(LONG);
  });

  it('retries a stream that breaks mid-way and never stores half an answer', async () => {
    fake.script({ text: LONG, breakAfter: 4 });
    fake.handler = () => ({ text: LONG });
    const events = await collectSse(await streamRequest(stack, { chat_id: 'sse-break', user_id: 'u1', text: 'break' }));
    const done = json(events.at(-1)!);
    expect(done.reply.text).toBe(LONG);
    // The retried call streams the same step again: followers see each piece once.
    expect(deltas(events).join('')).toBe(LONG);
    const rows = await stack.database.db.selectFrom('messages').select('content').where('session_id', '=', done.session_id).where('role', '=', 'assistant').execute();
    expect(rows.map((row) => row.content)).toEqual([LONG]);
  });

  it('ends with an error event {code, message} when the turn fails, not with done', async () => {
    // A request the provider refuses outright is not retried; the turn ends failed with the reason as its reply.
    fake.handler = () => ({ error: { status: 400 } });
    const refused = await collectSse(await streamRequest(stack, { chat_id: 'sse-fail', user_id: 'u1', text: 'fail please' }));
    expect(refused.map((e) => e.event)).not.toContain('done');
    expect(refused.at(-1)?.event).toBe('error');
    expect(json(refused.at(-1)!)).toEqual({ code: 'turn_failed', message: expect.stringMatching(/rejected the request/) });
    // Errors until the retries are spent: the same end.
    const before = fake.requests.length;
    fake.handler = () => ({ error: { status: 503 } });
    const spent = await collectSse(await streamRequest(stack, { chat_id: 'sse-fail', user_id: 'u1', text: 'and again' }));
    expect(fake.requests.length - before).toBe(1 + stack.config.model.maxRetries);
    expect(spent.at(-1)?.event).toBe('error');
    expect(json(spent.at(-1)!)).toEqual({ code: 'turn_failed', message: expect.stringMatching(/having trouble/) });
    expect(spent.map((e) => e.event)).not.toContain('done');
  });

  it('ends a turn the person stopped with done and its reply, not with an error', async () => {
    fake.handler = () => ({ text: LONG, chunkDelayMs: 150 });
    const events: SseEvent[] = [];
    const reader = readSse(await streamRequest(stack, { chat_id: 'sse-stop', user_id: 'u1', text: 'take your time' }));
    await readUntil(reader, events, (event) => event.event === 'delta');
    expect((await stack.post('/v1/messages', { chat_id: 'sse-stop', user_id: 'u1', text: '/stop' })).status).toBeLessThan(300);
    await readUntil(reader, events, (event) => event.event === 'done' || event.event === 'error');
    expect(events.at(-1)?.event).toBe('done');
    expect(json(events.at(-1)!).reply.text).toMatch(/^Stopped\./);
  });

  it('answers a follower of an unknown or malformed event with a 404 or 400', async () => {
    expect((await follow(stack, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await follow(stack, 'not-an-id')).status).toBe(400);
  });
});

describe('live turns with streaming off', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, env: { HERALD_STREAMING: 'off' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('calls the model without a stream and still ends the SSE answer with the reply', async () => {
    fake.handler = () => ({ text: 'plain answer' });
    const events = await collectSse(await streamRequest(stack, { chat_id: 'off-1', user_id: 'u1', text: 'hi' }));
    expect(fake.requests.at(-1)?.stream).toBeUndefined();
    expect(deltas(events).join('')).toBe('plain answer');
    expect(json(events.at(-1)!).reply.text).toBe('plain answer');
  });
});

// The fake's window is small, and Herald is told the same (HERALD_CONTEXT_TOKENS): a chat of a few
// long turns is compressed before its next turn (test/long-chats.test.ts does the same at length).
const WINDOW = 16_000;

describe('a live turn that compresses the conversation', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ contextTokens: WINDOW });
    stack = await startStack({ model: fake, env: { HERALD_CONTEXT_TOKENS: String(WINDOW) } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const chatModel = (request: FakeRequest): FakeReply => {
    if (isSummaryRequest(request)) return { text: '## Goal\nCarry on with the conversation.' };
    const turn = /turn (\d+)/.exec(request.lastUserText)?.[1] ?? '?';
    return { text: `answer ${turn}: ${longText('reply', 1200)}` };
  };
  const named = (events: SseEvent[], name: string) => events.filter((e) => e.event === name).map(json);

  /** Sends turns to a chat until its session is compressed; returns the events of that turn and the session before it. */
  async function untilCompressed(chat: string): Promise<{ events: SseEvent[]; parent: string }> {
    let parent = '';
    for (let turn = 1; turn <= 40; turn++) {
      const events = await collectSse(await streamRequest(stack, { chat_id: chat, user_id: 'u1', text: `turn ${turn}: ${longText(`ask ${turn}`, 1500)}` }));
      const done = json(events.at(-1)!);
      if (parent !== '' && done.session_id !== parent) return { events, parent };
      parent = done.session_id;
    }
    throw new Error(`chat ${chat} was never compressed`);
  }

  it('shows the compression before the turn starting and ending, then streams the answer', async () => {
    fake.handler = chatModel;
    const { events, parent } = await untilCompressed('squeeze');
    expect(fake.requests.filter(isSummaryRequest)).toHaveLength(1);
    expect(named(events, 'compression')).toEqual([{ status: 'start' }, { status: 'done' }]);
    const names = events.map((e) => e.event);
    expect(names.lastIndexOf('compression')).toBeLessThan(names.indexOf('delta'));
    const done = json(events.at(-1)!);
    expect(events.at(-1)?.event).toBe('done');
    expect(done.reply.text).toMatch(/^answer \d+: /);
    expect(deltas(events).join('')).toBe(done.reply.text);
    // The answer came from the child session the chat goes on in.
    const ended = (await stack.get(`/v1/sessions/${parent}`)).body;
    expect(ended.end_reason).toBe('compression');
    expect(done.session_id).toBe(ended.child_session_id);
  });

  it('shows a compression in the middle of a turn, when the provider refuses the prompt as too long', async () => {
    fake.handler = chatModel;
    let session = '';
    for (let turn = 1; turn <= 10; turn++) {
      const sent = await stack.post('/v1/messages?wait=60', { chat_id: 'overflow', user_id: 'u1', text: `turn ${turn}: ${longText(`ask ${turn}`, 1500)}` });
      session = sent.body.session_id;
    }
    // The provider's real window is smaller than Herald was told: the next prompt is refused.
    fake.contextTokens = fake.requestsFor(session).at(-1)!.promptTokens - 300;
    try {
      const events = await collectSse(await streamRequest(stack, { chat_id: 'overflow', user_id: 'u1', text: `turn 11: ${longText('ask 11', 1500)}` }));
      expect(fake.requestsFor(session).filter((request) => request.refused)).toHaveLength(1);
      const record = await stack.database.db.selectFrom('session_compressions').select(['trigger', 'status']).where('session_id', '=', session).executeTakeFirstOrThrow();
      expect(record).toEqual({ trigger: 'overflow', status: 'done' });
      expect(named(events, 'compression')).toEqual([{ status: 'start' }, { status: 'done' }]);
      expect(events.at(-1)?.event).toBe('done');
      expect(json(events.at(-1)!).reply.text).toMatch(/^answer 11: /);
      expect(deltas(events).join('')).toBe(json(events.at(-1)!).reply.text);
    } finally {
      fake.contextTokens = WINDOW;
    }
  });
});

// Issue 35 point 1: the usage a streamed call reports, and so stores, is exactly a non-streamed
// call's. The fake answers both with the same usage (its own count would differ by the request's
// `stream` fields), cached tokens included, over a tool step and the answer.
describe.each([
  ['OpenAI', startFakeOpenAI],
  ['Anthropic', startFakeAnthropic],
] as const)('the usage of a streamed call (%s wire)', (_name, startFake) => {
  let fake: FakeLLM;
  let streamed: Stack;
  let plain: Stack;
  beforeAll(async () => {
    fake = await startFake({ chunkDelayMs: 2 });
    streamed = await startStack({ model: fake });
    plain = await startStack({ env: { ...modelEnv(fake), HERALD_STREAMING: 'off' } });
  });
  afterAll(async () => {
    await plain.stop();
    await streamed.stop();
  });

  const calls = (stack: Stack) =>
    stack.database.db
      .selectFrom('model_calls')
      .select(['input_tokens', 'output_tokens', 'cached_input_tokens', 'cache_write_tokens', 'finish_reason'])
      .where('kind', '=', 'turn')
      .orderBy('id')
      .execute();

  it('is stored exactly as the same answer not streamed reports it, input and output tokens', async () => {
    fake.handler = (request) =>
      request.messages.at(-1)?.role === 'user'
        ? {
            toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: 'read the runbook', status: 'pending' }] } }],
            usage: { inputTokens: 2345, cachedInputTokens: 1024, outputTokens: 57 },
          }
        : { text: LONG, usage: { inputTokens: 2480, cachedInputTokens: 2048, outputTokens: 31 } };
    const viaStream = await collectSse(await streamRequest(streamed, { chat_id: 'usage', user_id: 'u1', text: 'plan it' }));
    expect(json(viaStream.at(-1)!).reply.text).toBe(LONG);
    expect(fake.requests.at(-1)?.stream).toBe(true);
    const whole = await plain.post('/v1/messages?wait=30', { chat_id: 'usage', user_id: 'u1', text: 'plan it' });
    expect(whole.body.reply.text).toBe(LONG);
    expect(fake.requests.at(-1)?.stream).toBeUndefined();
    const [streamedCalls, plainCalls] = [await calls(streamed), await calls(plain)];
    expect(streamedCalls).toHaveLength(2);
    expect(streamedCalls).toEqual(plainCalls);
    expect(streamedCalls.map((call) => [call.output_tokens, call.cached_input_tokens])).toEqual([
      [57, 1024],
      [31, 2048],
    ]);
  });
});
