import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicProvider, OpenAIProvider, ProviderError } from '@herald/agent';
import type { ChatMessage, CompletionRequest, Provider } from '@herald/agent';
import { startFakeAnthropic, startFakeOpenAI } from '../../../test/support/fake-llm.ts';
import type { FakeLLM } from '../../../test/support/fake-llm.ts';

const tools = [
  {
    name: 'todo',
    description: 'task list',
    parameters: { type: 'object', properties: { todos: { type: 'array' } } },
  },
];

function request(messages: ChatMessage[], extra: Partial<CompletionRequest> = {}): CompletionRequest {
  return { sessionId: 's-1', system: 'You are a test.', messages, tools, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (ProviderError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a ProviderError');
}

const conversation: ChatMessage[] = [
  { role: 'user', content: 'plan my day' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'todo', arguments: '{"todos":[]}' }] },
  { role: 'tool', content: '{"todos":[]}', tool_call_id: 'call_1' },
];

for (const kind of ['openai', 'anthropic'] as const) {
  describe(`${kind} provider through the real SDK`, () => {
    let fake: FakeLLM;
    let provider: Provider;
    beforeAll(async () => {
      fake = kind === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
      provider =
        kind === 'openai'
          ? new OpenAIProvider({ model: 'm', apiKey: 'k', baseURL: fake.url, timeoutMs: 1000 })
          : new AnthropicProvider({ model: 'm', apiKey: 'k', baseURL: fake.url, timeoutMs: 1000 });
    });
    afterAll(async () => {
      await fake.close();
    });

    it('returns text and usage', async () => {
      fake.handler = () => ({ text: 'hi there' });
      const result = await provider.complete(request([{ role: 'user', content: 'hello' }]));
      expect(result.content).toBe('hi there');
      expect(result.finishReason).toBe('stop');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      expect(result.usage.outputTokens).toBeGreaterThan(0);
    });

    it('returns tool calls and sends tool results in its wire format', async () => {
      fake.handler = () => ({ toolCalls: [{ name: 'todo', arguments: { todos: [] } }] });
      const result = await provider.complete(request([{ role: 'user', content: 'go' }]));
      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls).toHaveLength(1);
      expect(result.toolCalls[0]?.name).toBe('todo');
      expect(JSON.parse(result.toolCalls[0]?.arguments ?? '')).toEqual({ todos: [] });

      fake.handler = () => ({ text: 'done' });
      await provider.complete(request(conversation));
      const body = fake.requests[fake.requests.length - 1]?.body as any;
      if (kind === 'openai') {
        expect(body.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
        expect(body.messages[2].tool_calls[0]).toEqual({
          id: 'call_1',
          type: 'function',
          function: { name: 'todo', arguments: '{"todos":[]}' },
        });
        expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"todos":[]}' });
        expect(body.prompt_cache_key).toBe('s-1');
        expect(body.tools[0].function.name).toBe('todo');
      } else {
        expect(body.system[0]).toMatchObject({ type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } });
        expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
        expect(body.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'call_1', name: 'todo', input: { todos: [] } });
        expect(body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1' });
        // The rolling breakpoint sits on the conversation's tail; another one on the tools.
        expect(body.messages[2].content[0].cache_control).toEqual({ type: 'ephemeral' });
        expect(body.tools[0]).toMatchObject({ name: 'todo', cache_control: { type: 'ephemeral' } });
      }
    });

    it('reports cached input tokens for a repeated long prefix', async () => {
      fake.handler = () => ({ text: 'ok' });
      const long = 'A stable system prompt. '.repeat(400);
      const first = await provider.complete(request([{ role: 'user', content: 'one' }], { system: long, sessionId: 'cache' }));
      expect(first.usage.cachedInputTokens).toBe(0);
      const second = await provider.complete(
        request(
          [
            { role: 'user', content: 'one' },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'two' },
          ],
          { system: long, sessionId: 'cache' },
        ),
      );
      expect(second.usage.cachedInputTokens).toBeGreaterThan(1000);
      expect(second.usage.inputTokens).toBeGreaterThanOrEqual(second.usage.cachedInputTokens);
    });

    it('classifies 429 with retry-after as a retryable rate limit', async () => {
      fake.handler = () => ({ error: { status: 429, headers: { 'retry-after': '2' } } });
      const error = await failure(provider.complete(request([{ role: 'user', content: 'x' }])));
      expect(error.kind).toBe('rate_limit');
      expect(error.status).toBe(429);
      expect(error.retryAfterMs).toBe(2000);
      expect(error.isRetryable).toBe(true);
    });

    it('classifies 5xx, 401 and unreadable answers', async () => {
      fake.handler = () => ({ error: { status: 502 } });
      expect((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind).toBe('server');
      fake.handler = () => ({ error: { status: 401 } });
      const auth = await failure(provider.complete(request([{ role: 'user', content: 'x' }])));
      expect(auth.kind).toBe('auth');
      expect(auth.isRetryable).toBe(false);
      fake.handler = () => ({ malformed: true });
      expect((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind).toBe('malformed');
    });

    it('times out a hanging call and honours abort', async () => {
      fake.handler = () => ({ hang: true });
      expect((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind).toBe('timeout');
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const aborted = await failure(provider.complete(request([{ role: 'user', content: 'x' }], { signal: controller.signal })));
      expect(aborted.kind).toBe('aborted');
    });
  });
}
