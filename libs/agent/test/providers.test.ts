import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicProvider, OpenAIProvider, ProviderError } from '@herald/agent';
import type { ChatMessage, CompletionRequest, Provider } from '@herald/agent';
import { startFakeAnthropic, startFakeOpenAI } from '../../../test/support/fake-llm.ts';
import type { FakeLLM } from '../../../test/support/fake-llm.ts';
import { gate, waitFor } from '../../../test/support/wait.ts';

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

    it('classifies a prompt over the fake window as a context overflow, and reports the real prompt size', async () => {
      fake.handler = () => ({ text: 'fits' });
      fake.contextTokens = 400;
      try {
        const small = await provider.complete(request([{ role: 'user', content: 'short' }]));
        expect(small.usage.inputTokens).toBe(fake.requests.at(-1)!.promptTokens);
        const overflow = await failure(provider.complete(request([{ role: 'user', content: 'x'.repeat(2000) }])));
        expect(overflow.kind).toBe('context_overflow');
        expect(overflow.status).toBe(400);
        expect(overflow.isRetryable).toBe(false);
        expect(fake.requests.at(-1)!.refused).toBe(true);
      } finally {
        fake.contextTokens = undefined;
      }
      fake.handler = () => ({ error: { status: 413 } });
      expect((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind).toBe('context_overflow');
      fake.handler = () => ({ error: { status: 400 } });
      expect((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind).toBe('bad_request');
    });

    it('times out a hanging call and honours abort', async () => {
      fake.handler = () => ({ hang: true });
      expect((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind).toBe('timeout');
      // Aborted while the request is at the server, not before it was sent.
      const controller = new AbortController();
      const before = fake.requests.length;
      const aborted = failure(provider.complete(request([{ role: 'user', content: 'x' }], { signal: controller.signal })));
      await waitFor(async () => fake.requests.length > before, { what: 'the request at the server' });
      controller.abort();
      expect((await aborted).kind).toBe('aborted');
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Wire details, usage arithmetic and failure classes beyond the shared cases above.

/** A fetch that hands the SDK's request to the real fetch and keeps a copy of every JSON answer. */
function recordingFetch(answers: unknown[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.ok) answers.push(await response.clone().json());
    return response;
  };
}

describe('anthropic wire conversion', () => {
  let fake: FakeLLM;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('merges consecutive tool results into one user turn and keeps alternation', async () => {
    const provider = new AnthropicProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
    await provider.complete(
      request([
        { role: 'user', content: 'first' },
        { role: 'user', content: 'second' },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_a', name: 'todo', arguments: '{"todos":[1]}' },
            { id: 'call_b', name: 'todo', arguments: 'not json' },
          ],
        },
        { role: 'tool', content: 'result a', tool_call_id: 'call_a' },
        { role: 'tool', content: 'result b', tool_call_id: 'call_b' },
      ]),
    );
    const body = fake.requests[fake.requests.length - 1]?.body as any;
    expect(body.max_tokens).toBe(4096);
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'call_a', name: 'todo', input: { todos: [1] } },
          // Arguments that are not JSON go out as an empty object rather than failing the call.
          { type: 'tool_use', id: 'call_b', name: 'todo', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a', content: 'result a' },
          { type: 'tool_result', tool_use_id: 'call_b', content: 'result b', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    expect(body.tools).toEqual([{ name: 'todo', description: 'task list', input_schema: tools[0]?.parameters, cache_control: { type: 'ephemeral' } }]);
    // Exactly three breakpoints: last tool, system, conversation tail (the API allows four).
    expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(3);
    // The fake's neutral view reads the same conversation back.
    const seen = fake.requests[fake.requests.length - 1];
    expect(seen?.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['result a', 'result b']);
    expect(seen?.toolNames).toEqual(['todo']);
  });

  it('leaves out an empty system prompt, which the API would reject as an empty text block', async () => {
    const provider = new AnthropicProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
    await provider.complete(request([{ role: 'user', content: 'hi' }], { system: '', tools: [] }));
    const body = fake.requests[fake.requests.length - 1]?.body as any;
    expect(body.system).toBeUndefined();
    expect(body.tools).toBeUndefined();
  });

  it('reports total input as uncached + cache read + cache write, and reads back the rolling tail', async () => {
    const answers: any[] = [];
    const provider = new AnthropicProvider({ model: 'm', apiKey: 'k', baseURL: fake.url, fetch: recordingFetch(answers) });
    const system = 'Standing instructions for the rolling cache test. '.repeat(120);
    const turn1: ChatMessage[] = [{ role: 'user', content: 'Long question. '.repeat(400) }];
    const first = await provider.complete(request(turn1, { system, sessionId: 'rolling' }));
    const wire1 = answers[answers.length - 1].usage;
    expect(first.usage.cachedInputTokens).toBe(0);
    expect(first.usage.cacheWriteTokens).toBe(wire1.cache_creation_input_tokens);
    expect(first.usage.cacheWriteTokens).toBeGreaterThan(2000);
    expect(first.usage.inputTokens).toBe(wire1.input_tokens + wire1.cache_read_input_tokens + wire1.cache_creation_input_tokens);

    const turn2: ChatMessage[] = [...turn1, { role: 'assistant', content: first.content }, { role: 'user', content: 'and then?' }];
    const second = await provider.complete(request(turn2, { system, sessionId: 'rolling' }));
    const wire2 = answers[answers.length - 1].usage;
    // Everything up to last turn's tail breakpoint is read, not just tools + system.
    expect(second.usage.cachedInputTokens).toBe(first.usage.cacheWriteTokens);
    expect(second.usage.cacheWriteTokens).toBeGreaterThan(0);
    expect(second.usage.inputTokens).toBe(wire2.input_tokens + wire2.cache_read_input_tokens + wire2.cache_creation_input_tokens);
  });

  it('classifies 529 overloaded and 403 and 400', async () => {
    const provider = new AnthropicProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
    fake.script({ error: { status: 529 } }, { error: { status: 403 } }, { error: { status: 400 } });
    const kinds = [];
    for (let i = 0; i < 3; i++) kinds.push((await failure(provider.complete(request([{ role: 'user', content: 'x' }])))).kind);
    expect(kinds).toEqual(['server', 'auth', 'bad_request']);
    fake.handler = (r) => ({ text: `echo: ${r.lastUserText}` });
  });
});

describe('openai wire details', () => {
  let fake: FakeLLM;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('maps usage from the wire, cached tokens in 128-token steps per prompt_cache_key', async () => {
    const answers: any[] = [];
    const provider = new OpenAIProvider({ model: 'm', apiKey: 'k', baseURL: fake.url, fetch: recordingFetch(answers) });
    const system = 'A long and stable system prompt. '.repeat(200);
    const first = await provider.complete(request([{ role: 'user', content: 'one' }], { system, sessionId: 'k1' }));
    expect(first.usage).toEqual({
      inputTokens: answers[0].usage.prompt_tokens,
      outputTokens: answers[0].usage.completion_tokens,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
    });
    const again = await provider.complete(request([{ role: 'user', content: 'two' }], { system, sessionId: 'k1' }));
    expect(again.usage.cachedInputTokens).toBe(answers[1].usage.prompt_tokens_details.cached_tokens);
    expect(again.usage.cachedInputTokens % 128).toBe(0);
    expect(again.usage.cachedInputTokens).toBeGreaterThanOrEqual(1024);
    // Another cache key shares nothing.
    const other = await provider.complete(request([{ role: 'user', content: 'two' }], { system, sessionId: 'k2' }));
    expect(other.usage.cachedInputTokens).toBe(0);
  });

  it('keeps tool-call arguments as the raw text and leaves out an empty tools list', async () => {
    const provider = new OpenAIProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
    fake.script({ toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1' }] } }], text: 'calling' });
    const result = await provider.complete(request([{ role: 'user', content: 'go' }], { tools: [] }));
    expect(result.content).toBe('calling');
    expect(result.toolCalls[0]?.arguments).toBe('{"todos":[{"id":"1"}]}');
    expect(result.toolCalls[0]?.id).toMatch(/^call_/);
    expect((fake.requests[fake.requests.length - 1]?.body as any).tools).toBeUndefined();
  });

  it('reads retry-after-ms before retry-after', async () => {
    const provider = new OpenAIProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
    fake.script({ error: { status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } } });
    const error = await failure(provider.complete(request([{ role: 'user', content: 'x' }])));
    expect(error.kind).toBe('rate_limit');
    expect(error.retryAfterMs).toBe(1500);
  });
});

describe('failures outside the HTTP exchange', () => {
  const brokenJson: typeof fetch = async () => new Response('{"id":"chatcmpl-1","choices":[', { status: 200, headers: { 'content-type': 'application/json' } });

  for (const kind of ['openai', 'anthropic'] as const) {
    const make = (options: { baseURL: string; fetch?: typeof fetch; timeoutMs?: number }) =>
      kind === 'openai' ? new OpenAIProvider({ model: 'm', apiKey: 'k', ...options }) : new AnthropicProvider({ model: 'm', apiKey: 'k', ...options });

    it(`${kind}: a body that is not JSON is malformed (retryable)`, async () => {
      const error = await failure(make({ baseURL: 'http://127.0.0.1:9', fetch: brokenJson }).complete(request([{ role: 'user', content: 'x' }])));
      expect(error.kind).toBe('malformed');
      expect(error.isRetryable).toBe(true);
    });

    it(`${kind}: a refused connection is a connection error`, async () => {
      const fake = kind === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
      const url = fake.url;
      await fake.close();
      const error = await failure(make({ baseURL: url }).complete(request([{ role: 'user', content: 'x' }])));
      expect(error.kind).toBe('connection');
    });

    it(`${kind}: an already-aborted signal never reaches the server`, async () => {
      const fake = kind === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
      try {
        const error = await failure(make({ baseURL: fake.url }).complete(request([{ role: 'user', content: 'x' }], { signal: AbortSignal.abort() })));
        expect(error.kind).toBe('aborted');
        expect(error.isRetryable).toBe(false);
        expect(fake.requests).toHaveLength(0);
      } finally {
        await fake.close();
      }
    });
  }
});

describe('the fake servers', () => {
  it('count calls in flight per session key, and release an aborted one at once', async () => {
    const fake = await startFakeOpenAI();
    try {
      const provider = new OpenAIProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
      // The parallel calls are answered only once all three are in flight together.
      const together = gate();
      fake.handler = async (r) => {
        if (r.sessionKey === 'parallel') await together.opened;
        return { text: 'ok' };
      };
      const parallel = Promise.all([1, 2, 3].map((n) => provider.complete(request([{ role: 'user', content: `${n}` }], { sessionId: 'parallel' }))));
      await waitFor(async () => fake.inFlight.get('parallel') === 3, { what: 'three calls in flight' });
      together.open();
      await parallel;
      await provider.complete(request([{ role: 'user', content: 'a' }], { sessionId: 'serial' }));
      await provider.complete(request([{ role: 'user', content: 'b' }], { sessionId: 'serial' }));
      expect(fake.maxConcurrentPerKey.get('parallel')).toBe(3);
      expect(fake.maxConcurrentPerKey.get('serial')).toBe(1);

      // An aborted call is released when the client hangs up, while its handler is still busy.
      const busy = gate();
      fake.handler = async () => {
        await busy.opened;
        return { text: 'too late' };
      };
      const controller = new AbortController();
      const aborted = failure(provider.complete(request([{ role: 'user', content: 'c' }], { sessionId: 'serial', signal: controller.signal })));
      await waitFor(async () => fake.inFlight.get('serial') === 1, { what: 'the call in flight' });
      controller.abort();
      expect((await aborted).kind).toBe('aborted');
      try {
        await waitFor(async () => fake.inFlight.get('serial') === 0, { what: 'the aborted call released' });
      } finally {
        busy.open();
      }
    } finally {
      await fake.close();
    }
  });

  it('answers scripted replies in order, then falls back to the handler', async () => {
    const fake = await startFakeAnthropic({ sessionKeyOf: (r) => r.system });
    try {
      const provider = new AnthropicProvider({ model: 'm', apiKey: 'k', baseURL: fake.url });
      fake.script({ text: 'one' }, { text: 'two' });
      const texts = [];
      for (let i = 0; i < 3; i++) texts.push((await provider.complete(request([{ role: 'user', content: 'three' }]))).content);
      expect(texts).toEqual(['one', 'two', 'echo: three']);
      expect(fake.maxConcurrentPerKey.get('You are a test.')).toBe(1);
      expect(fake.requests[0]?.headers['anthropic-version']).toBeTruthy();
    } finally {
      await fake.close();
    }
  });
});

describe('createProvider', () => {
  it('builds the provider the spec names', async () => {
    const { createProvider } = await import('../src/providers/index.ts');
    const openai = createProvider({ provider: 'openai', model: 'gpt-x', apiKey: 'k' });
    const anthropic = createProvider({ provider: 'anthropic', model: 'claude-x', apiKey: 'k' });
    expect(openai).toBeInstanceOf(OpenAIProvider);
    expect(anthropic).toBeInstanceOf(AnthropicProvider);
    expect([openai.name, openai.model, anthropic.name, anthropic.model]).toEqual(['openai', 'gpt-x', 'anthropic', 'claude-x']);
  });
});
