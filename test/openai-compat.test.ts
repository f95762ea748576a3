import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

describe('the OpenAI-compatible endpoint, through the official openai client', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ chunkDelayMs: 5 });
    // The agent's answer names every user message it was given, so a duplicated input shows.
    fake.handler = (request) => ({
      text: `seen: ${request.messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .join(' | ')}`,
    });
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
