import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { gate } from './support/wait.ts';

describe('per-session order and queue modes', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let chat = 0;
  const send = (chatId: string, text: string, wait?: number) => stack.post(`/v1/messages${wait === undefined ? '' : `?wait=${wait}`}`, { chat_id: chatId, user_id: 'u1', text });
  const event = async (id: string) => (await stack.get(`/v1/events/${id}`)).body;
  const done = (id: string) => stack.waitForEvent(id);

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, env: { HERALD_SESSION_BACKLOG: '3' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('followup (default): each message is its own turn, in order', async () => {
    const id = `q-${chat++}`;
    const held = gate();
    fake.handler = async (request) => {
      if (request.lastUserText === 'one') await held.opened;
      return { text: `re: ${request.lastUserText}` };
    };
    const first = await send(id, 'one');
    await fake.waitForCalls(first.body.session_id);
    const second = await send(id, 'two');
    const third = await send(id, 'three');
    held.open();
    expect((await done(third.body.event_id)).reply.text).toBe('re: three');
    expect((await event(first.body.event_id)).reply.text).toBe('re: one');
    expect((await event(second.body.event_id)).reply.text).toBe('re: two');
    const transcript = (await stack.get(`/v1/sessions/${first.body.session_id}/messages`)).body.messages;
    expect(transcript.map((m: any) => m.content)).toEqual(['one', 're: one', 'two', 're: two', 'three', 're: three']);
  });

  it('collect: messages waiting when a turn ends are merged into one turn', async () => {
    const id = `q-${chat++}`;
    const mode = await send(id, '/queue collect', 5);
    expect(mode.body.reply.text).toBe('Queue mode set to collect.');
    const held = gate();
    fake.handler = async (request) => {
      if (request.lastUserText === 'one') await held.opened;
      return {
        text: `re: ${request.messages
          .filter((m) => m.role === 'user')
          .map((m) => m.content)
          .join('+')}`,
      };
    };
    const first = await send(id, 'one');
    await fake.waitForCalls(first.body.session_id);
    const second = await send(id, 'two');
    const third = await send(id, 'three');
    held.open();
    const merged = await done(third.body.event_id);
    expect((await event(second.body.event_id)).reply.text).toBe(merged.reply.text);
    expect(merged.reply.text).toBe('re: one+two+three');
    expect(fake.requestsFor(first.body.session_id)).toHaveLength(2);
  });

  it('steer: a message arriving mid-run joins the running turn at the next boundary', async () => {
    const id = `q-${chat++}`;
    const created = await send(id, '/queue', 5);
    expect(created.body.reply.text).toMatch(/^Queue mode is followup/);
    const patched = await stack.patch(`/v1/sessions/${created.body.session_id}`, { queue_mode: 'steer' });
    expect(patched.status).toBe(200);
    expect(patched.body.queue_mode).toBe('steer');
    const held = gate();
    fake.handler = async (request: FakeRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (request.messages.length === 1) {
        await held.opened;
        return { toolCalls: [{ name: 'todo', arguments: {} }] };
      }
      return {
        text: `saw: ${request.messages
          .filter((m) => m.role === 'user')
          .map((m) => m.content)
          .join('+')} after ${last?.role}`,
      };
    };
    const first = await send(id, 'start');
    await fake.waitForCalls(first.body.session_id);
    const steer = await send(id, 'also this');
    held.open();
    const answered = await done(first.body.event_id);
    expect(answered.reply.text).toBe('saw: start+also this after user');
    const steered = await event(steer.body.event_id);
    expect(steered.reply.text).toBe(answered.reply.text);
    // After the run ended, a message is an ordinary next turn.
    fake.handler = (request) => ({ text: `next: ${request.lastUserText}` });
    const later = await send(id, 'later', 20);
    expect(later.body.reply.text).toBe('next: later');
  });

  it('interrupt: a new message aborts the running model call and the turn continues with it', async () => {
    const id = `q-${chat++}`;
    await send(id, '/queue interrupt', 5);
    fake.handler = (request) => {
      if (request.lastUserText === 'long question') return { hang: true };
      return {
        text: `answering: ${request.messages
          .filter((m) => m.role === 'user')
          .map((m) => m.content)
          .join('+')}`,
      };
    };
    const first = await send(id, 'long question');
    await fake.waitForCalls(first.body.session_id);
    const second = await send(id, 'actually, this');
    const answered = await done(first.body.event_id);
    expect(answered.reply.text).toBe('answering: long question+actually, this');
    expect((await event(second.body.event_id)).reply.text).toBe(answered.reply.text);
    expect(fake.inFlight.get(first.body.session_id) ?? 0).toBe(0);
  });

  it('/stop aborts the running turn with a reply, and the session goes on', async () => {
    const id = `q-${chat++}`;
    fake.handler = (request) => (request.lastUserText === 'forever' ? { hang: true } : { text: 'fine' });
    const first = await send(id, 'forever');
    await fake.waitForCalls(first.body.session_id);
    const stop = await send(id, '/stop', 5);
    expect(stop.body.reply.text).toBe('Stopping the running turn.');
    expect((await done(first.body.event_id)).reply.text).toMatch(/^Stopped\./);
    const idle = await send(id, '/stop', 5);
    expect(idle.body.reply.text).toBe('Nothing is running.');
    expect((await send(id, 'hello', 20)).body.reply.text).toBe('fine');
  });

  it('refuses messages over the per-session backlog with a clear reply', async () => {
    const id = `q-${chat++}`;
    const held = gate();
    fake.handler = async () => {
      await held.opened;
      return { text: 'ok' };
    };
    const accepted = [await send(id, 'a'), await send(id, 'b'), await send(id, 'c')];
    const refused = await send(id, 'd');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('backlog_full');
    expect(refused.body.error.message).toMatch(/3 messages waiting/);
    held.open();
    for (const response of accepted) expect((await done(response.body.event_id)).reply.text).toBe('ok');
    expect((await send(id, 'e', 20)).status).toBe(200);
  });
});
