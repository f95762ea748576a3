import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, startFakeAnthropic } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { collectSse, readSse } from './support/sse-client.ts';
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
