import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { personWithToken } from './support/people.ts';
import type { TestPerson } from './support/people.ts';

/** The agent's answer names every user message of the session it was given, so a mixed-up chat shows. */
const seenHandler = (request: FakeRequest) => ({
  text: `seen: ${request.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join(' | ')}`,
});

describe('the OpenAI-compatible endpoint, through the official openai client', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 5 });
    // A duplicated input shows in the answer.
    fake.handler = seenHandler;
    stack = await startStack({ model: fake });
    client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: TEST_TOKEN, maxRetries: 0 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('lists the profiles as models', async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toContain('main');
  });

  it('answers a completion as an ordinary assistant message with usage', async () => {
    const completion = await client.chat.completions.create({ model: 'main', user: 'chat-a', messages: [{ role: 'user', content: 'first' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'seen: first' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    expect(completion.usage?.total_tokens).toBe((completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0));
  });

  it('takes only the newest user message from a resent history, and keeps two chats apart', async () => {
    const second = await client.chat.completions.create({
      model: 'main',
      user: 'chat-a',
      messages: [
        { role: 'system', content: 'You are a front end system prompt' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'seen: first' },
        { role: 'user', content: 'second' },
      ],
    });
    expect(second.choices[0]?.message.content).toBe('seen: first | second');
    const other = await client.chat.completions.create({ model: 'main', messages: [{ role: 'user', content: 'elsewhere' }] }, { headers: { 'x-herald-chat-id': 'chat-b' } });
    expect(other.choices[0]?.message.content).toBe('seen: elsewhere');
  });

  it('streams chunks that join to the answer, with usage in the last chunk when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'main',
      user: 'chat-stream',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'streamed please' }] }],
    });
    const pieces: string[] = [];
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) pieces.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('seen: streamed please');
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('refuses an unknown model (profile), an empty input and a missing token', async () => {
    await expect(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
    await expect(client.chat.completions.create({ model: 'main', messages: [{ role: 'assistant', content: 'x' }] })).rejects.toMatchObject({ status: 400 });
    const anonymous = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: 'wrong-token', maxRetries: 0 });
    await expect(anonymous.models.list()).rejects.toMatchObject({ status: 401 });
  });
});

describe('the OpenAI-compatible endpoint with personal tokens', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let alice: TestPerson;
  let bob: TestPerson;
  let viewer: TestPerson;
  const clientOf = (token: string) => new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: token, maxRetries: 0 });
  const ask = async (client: OpenAI, text: string, user?: string, chatHeader?: string) => {
    const completion = await client.chat.completions.create(
      { model: 'main', messages: [{ role: 'user', content: text }], ...(user === undefined ? {} : { user }) },
      chatHeader === undefined ? {} : { headers: { 'x-herald-chat-id': chatHeader } },
    );
    return completion.choices[0]?.message.content;
  };
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = seenHandler;
    stack = await startStack({ model: fake });
    expect((await stack.post('/v1/profiles', { name: 'ops' })).status).toBe(201);
    alice = await personWithToken(stack.database.db, 'Alice', [{ role: 'member', profiles: ['main'] }], ['api:alice']);
    bob = await personWithToken(stack.database.db, 'Bob', [{ role: 'member', profiles: [] }], ['api:bob']);
    viewer = await personWithToken(stack.database.db, 'Vera', [{ role: 'viewer', profiles: [] }]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('lists as models only the profiles the caller may chat with; the bootstrap token sees them all', async () => {
    const ids = async (token: string) => (await clientOf(token).models.list()).data.map((model) => model.id).sort();
    expect(await ids(TEST_TOKEN)).toEqual(['main', 'ops']);
    expect(await ids(alice.token)).toEqual(['main']);
    expect(await ids(bob.token)).toEqual(['main', 'ops']);
    expect(await ids(viewer.token)).toEqual([]);
    // What the list leaves out cannot be used either.
    await expect(clientOf(alice.token).chat.completions.create({ model: 'ops', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 404 });
  });

  it("keys a person's chats by `user`, each their own: two front-end chats stay two sessions, and nobody reaches another's", async () => {
    const client = clientOf(alice.token);
    expect(await ask(client, 'first', 'chat-a')).toBe('seen: first');
    expect(await ask(client, 'elsewhere', 'chat-b')).toBe('seen: elsewhere');
    expect(await ask(client, 'second', 'chat-a')).toBe('seen: first | second');
    // The header keys the chat too; an empty one is not given, and `user` keys it.
    expect(await ask(client, 'third', undefined, 'chat-b')).toBe('seen: elsewhere | third');
    expect(await ask(client, 'fourth', 'chat-a', '')).toBe('seen: first | second | fourth');
    // Bob choosing Alice's `user` (or her key) gets a chat of his own.
    expect(await ask(clientOf(bob.token), 'intruder', 'chat-a')).toBe('seen: intruder');
    expect(await ask(clientOf(bob.token), 'intruder again', 'api:alice')).toBe('seen: intruder again');
    // Each speaks as themself, whatever `user` said: the sessions are theirs.
    const sessions = await stack.database.db.selectFrom('sessions').select(['chat_id', 'origin_user_id']).where('platform', '=', 'api').orderBy('chat_id').execute();
    expect(sessions).toEqual([
      { chat_id: 'api:alice/chat-a', origin_user_id: 'api:alice' },
      { chat_id: 'api:alice/chat-b', origin_user_id: 'api:alice' },
      { chat_id: 'api:bob/api:alice', origin_user_id: 'api:bob' },
      { chat_id: 'api:bob/chat-a', origin_user_id: 'api:bob' },
    ]);
    const mine = (await stack.get('/v1/sessions', bob.auth)).body.sessions.map((session: any) => session.chat_id).sort();
    expect(mine).toEqual(['api:bob/api:alice', 'api:bob/chat-a']);
  });
});
