import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

describe('per-turn recall from past sessions', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, env: { HERALD_RECALL: 'past-sessions' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('puts what the same person said before next to the message, never in the system prompt', async () => {
    fake.handler = () => ({ text: 'noted' });
    await stack.post('/v1/messages?wait=20', { chat_id: 'recall-a', user_id: 'ada', text: 'My favourite colour is teal' });
    await stack.post('/v1/messages?wait=20', { chat_id: 'recall-x', user_id: 'bob', text: 'My favourite colour is orange' });
    const asked = await stack.post('/v1/messages?wait=20', { chat_id: 'recall-b', user_id: 'ada', text: 'Which favourite colour did I mention?' });
    const request = fake.requests.find((r) => r.sessionKey === asked.body.session_id);
    const body = request?.body as any;
    const last = body.messages[body.messages.length - 1];
    expect(last.role).toBe('user');
    expect(last.content).toMatch(/^Which favourite colour did I mention\?\n\n<memory-context>/);
    expect(last.content).toContain('user: My favourite colour is teal');
    // Only Ada's own sessions are searched.
    expect(last.content).not.toContain('orange');
    expect(body.messages[0].content).not.toContain('teal');
    // The transcript keeps the message as sent.
    const transcript = (await stack.get(`/v1/sessions/${asked.body.session_id}/messages`)).body.messages;
    expect(transcript[0].content).toBe('Which favourite colour did I mention?');
  });
});
