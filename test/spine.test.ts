import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { gate } from './support/wait.ts';

describe('the spine end to end (OpenAI wire)', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, env: { HERALD_MAX_ITERATIONS: '4' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('answers a message through the API', async () => {
    fake.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'c1', user_id: 'u1', text: 'hello there' });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toBe('echo: hello there');
    const calls = await stack.database.db.selectFrom('model_calls').selectAll().execute();
    expect(calls.length).toBeGreaterThan(0);
    expect(calls[0]?.input_tokens).toBeGreaterThan(0);
    expect(calls[0]?.output_tokens).toBeGreaterThan(0);
  });

  it('round-trips a tool call and keeps the transcript in order', async () => {
    fake.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user') {
        return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: 'buy milk', status: 'pending' }] } }] };
      }
      return { text: `done; tool said: ${last?.content ?? ''}` };
    };
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'c-tool', user_id: 'u1', text: 'remember milk' });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toContain('buy milk');
    const transcript = await stack.get(`/v1/sessions/${response.body.session_id}/messages`);
    const messages = transcript.body.messages;
    expect(messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[0].content).toBe('remember milk');
    expect(messages[1].tool_calls[0].function.name).toBe('todo');
    expect(messages[2].tool_call_id).toBe(messages[1].tool_calls[0].id);
    expect(JSON.parse(messages[2].content)).toMatchObject({ revision: 1, counts: { pending: 1 } });
    expect(messages[3].content).toBe(response.body.reply.text);
    for (let i = 1; i < messages.length; i++) {
      expect(Date.parse(messages[i].created_at)).toBeGreaterThanOrEqual(Date.parse(messages[i - 1].created_at));
    }
    // The tool result went back to the model in the OpenAI wire format.
    const second = fake.requests[fake.requests.length - 1]?.body as any;
    const toolMessage = second.messages.find((m: any) => m.role === 'tool');
    expect(toolMessage.tool_call_id).toBe(messages[1].tool_calls[0].id);
    expect(second.prompt_cache_key).toBe(response.body.session_id);
  });

  it('stores the system prompt once and reuses it on every turn', async () => {
    fake.handler = () => ({ text: 'ok' });
    const first = await stack.post('/v1/messages?wait=20', { chat_id: 'c-prompt', user_id: 'u1', text: 'one' });
    await stack.post('/v1/messages?wait=20', { chat_id: 'c-prompt', user_id: 'u1', text: 'two' });
    const session = await stack.database.db.selectFrom('sessions').select('system_prompt').where('id', '=', first.body.session_id).executeTakeFirstOrThrow();
    expect(session.system_prompt).toMatch(/todo/);
    expect(session.system_prompt).toMatch(/Conversation started \d{4}-\d{2}-\d{2}/);
    const systems = fake.requests.filter((r) => (r.body as any).prompt_cache_key === first.body.session_id).map((r) => (r.body as any).messages[0].content);
    expect(systems).toHaveLength(2);
    expect(systems[0]).toBe(session.system_prompt);
    expect(systems[1]).toBe(systems[0]);
  });

  it('gives the model a precise error for unknown tools and bad arguments', async () => {
    let step = 0;
    fake.handler = (request) => {
      step++;
      if (step === 1) return { toolCalls: [{ name: 'launch_rockets', arguments: {} }] };
      if (step === 2) return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1' }] } }] };
      const tools = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      return { text: tools.join(' | ') };
    };
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'c-bad-tool', user_id: 'u1', text: 'go' });
    expect(response.body.reply.text).toMatch(/Tool 'launch_rockets' does not exist\. Available tools: [a-z_, ]*\bmemory, [a-z_, ]*\btodo\b/);
    expect(response.body.reply.text).toMatch(/Invalid arguments for tool 'todo': todos\.0\.content/);
  });

  it('ends a runaway tool loop at the iteration limit with an explicit message', async () => {
    fake.handler = () => ({ toolCalls: [{ name: 'todo', arguments: {} }] });
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'c-loop', user_id: 'u1', text: 'loop' });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toMatch(/stopped after 4 tool-calling steps/);
  });

  it('retries provider errors and then answers', async () => {
    let calls = 0;
    fake.handler = () => {
      calls++;
      if (calls === 1) return { error: { status: 429, headers: { 'retry-after-ms': '10' } } };
      if (calls === 2) return { error: { status: 503 } };
      if (calls === 3) return { malformed: true };
      return { text: 'recovered' };
    };
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'c-retry', user_id: 'u1', text: 'hi' });
    expect(response.body.reply.text).toBe('recovered');
    expect(calls).toBe(4);
  });

  it('turns a persistent provider failure into a clear error reply, and the session stays usable', async () => {
    fake.handler = () => ({ error: { status: 500 } });
    const failed = await stack.post('/v1/messages?wait=20', { chat_id: 'c-fail', user_id: 'u1', text: 'hi' });
    expect(failed.status).toBe(200);
    expect(failed.body.reply.text).toMatch(/model call failed \(HTTP 500\)/);
    fake.handler = () => ({ text: 'back' });
    const next = await stack.post('/v1/messages?wait=20', { chat_id: 'c-fail', user_id: 'u1', text: 'again' });
    expect(next.body.reply.text).toBe('back');
  });

  it('answers 202 when the turn outlasts ?wait, and the reply stays readable', async () => {
    const held = gate();
    fake.handler = async () => {
      await held.opened;
      return { text: 'slow answer' };
    };
    const response = await stack.post('/v1/messages?wait=0.2', { chat_id: 'c-slow', user_id: 'u1', text: 'take your time' });
    expect(response.status).toBe(202);
    expect(response.body.reply).toBeUndefined();
    held.open();
    expect((await stack.waitForEvent(response.body.event_id)).reply.text).toBe('slow answer');
  });
});

describe('the spine end to end (Anthropic wire)', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    stack = await startStack({ model: fake });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('round-trips a tool call and stores usage with cache accounting', async () => {
    fake.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user') return { toolCalls: [{ name: 'todo', arguments: {} }] };
      return { text: `listed: ${last?.content ?? ''}` };
    };
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'a1', user_id: 'u1', text: 'what is on my list?' });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toMatch(/^listed: \{"todos":\[\]/);
    const calls = await stack.database.db.selectFrom('model_calls').selectAll().where('session_id', '=', response.body.session_id).orderBy('id').execute();
    expect(calls.map((c) => c.provider)).toEqual(['anthropic', 'anthropic']);
    expect(calls.map((c) => c.finish_reason)).toEqual(['tool_calls', 'stop']);
  });
});
