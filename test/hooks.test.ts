import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '@herald/hooks';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { countToolCalls } from './support/test-tools.ts';
import { startHookReceiver, writeHooks } from './support/hook-fixtures.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';

const SECRET = 'hook-secret-0123456789abcdef';
const CARD = '4111 1111 1111 1111';

const MODULES = {
  'guard.mjs': `
    const ONCALL = ['api:oncall-1'];
    export default function register(ctx) {
      ctx.on('pre_tool_call', (event) => {
        if (event.tool_name === 'terminal' && !ONCALL.includes(event.user_id)) {
          return { action: 'block', message: 'terminal is for the on-call group only; ' + event.user_id + ' is not in it' };
        }
      });
    }`,
  'redact.mjs': `
    const CARD = /\\b(?:\\d[ -]?){12,15}\\d\\b/g;
    export default function register(ctx) {
      ctx.on('transform_tool_result', (event) => CARD.test(event.result) ? event.result.replace(CARD, '[card redacted]') : undefined);
    }`,
  'mute.mjs': `
    export default function register(ctx) {
      ctx.on('pre_gateway_dispatch', (event) => ['muted-chat', '777'].includes(event.chat_id) ? { action: 'skip', reason: 'chat is muted' } : undefined);
    }`,
  'context.mjs': `
    export default function register(ctx) {
      ctx.on('pre_llm_call', (event) => event.user_message.startsWith('ctx:') ? { context: '[policy: answer in one line]' } : undefined);
    }`,
  'hang-closed.mjs': `
    export default function register(ctx) {
      ctx.on('pre_tool_call', (event) => event.tool_input?.label === 'closed' ? new Promise(() => {}) : undefined);
    }`,
  'hang-open.mjs': `
    export default function register(ctx) {
      ctx.on('pre_tool_call', (event) => event.tool_input?.label === 'open' ? new Promise(() => {}) : undefined);
    }`,
};

function hooksFile(receiverUrl: string): string {
  return `hooks:
  - { name: mute, event: pre_gateway_dispatch, module: ./mute.mjs }
  - { name: terminal-guard, event: pre_tool_call, module: ./guard.mjs }
  - { name: hang-closed, event: pre_tool_call, module: ./hang-closed.mjs, timeout_ms: 300, on_error: closed }
  - { name: hang-open, event: pre_tool_call, module: ./hang-open.mjs, timeout_ms: 300, on_error: open }
  - { name: card-redactor, event: transform_tool_result, module: ./redact.mjs }
  - { name: brief, event: pre_llm_call, module: ./context.mjs }
  - { name: siem, event: post_tool_call, url: ${receiverUrl} }
`;
}

/** Calls the tools the person's message names, then reports the tool results it was sent. */
function toolThenReport(calls: (text: string) => { name: string; arguments: Record<string, unknown> }[]) {
  return (request: FakeRequest): FakeReply => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `results: ${last.content}` };
    const toolCalls = calls(request.lastUserText);
    return toolCalls.length > 0 ? { toolCalls } : { text: `plain: ${request.lastUserText}` };
  };
}

describe('lifecycle hooks against the real services', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startHookReceiver>>;
  let telegram: FakeTelegram;
  const send = (chatId: string, text: string, userId = 'u1') => stack.post('/v1/messages?wait=30', { chat_id: chatId, user_id: userId, text });
  const toolMessages = async (sessionId: string) => (await stack.get(`/v1/sessions/${sessionId}/messages`)).body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    // The first delivery is refused with a 500: pg-boss must retry it.
    receiver = await startHookReceiver([500]);
    const file = writeHooks(MODULES, hooksFile(receiver.url));
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: fake,
      testTools: true,
      scheduler: true,
      env: {
        ...telegram.env,
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: 'hooks-webhook-secret',
        TELEGRAM_ALLOWED_USERS: '*',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_HOOKS_FILE: file,
        HERALD_HOOKS_SECRET: SECRET,
        HERALD_WEB_ALLOWLIST: '127.0.0.1',
        HERALD_SCHEDULER_TICK_MS: '100',
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.close();
    await telegram.close();
  });

  it('a module hook blocks terminal for a person outside the list, and the model sees the reason', async () => {
    fake.handler = toolThenReport(() => [{ name: 'terminal', arguments: { command: 'echo ran-in-sandbox' } }]);
    const refused = await send('hooks-term-guest', 'run it', 'guest-7');
    expect(refused.status).toBe(200);
    // Hooks see the person's id qualified by platform (the API's user_id guest-7 is api:guest-7).
    const reason = 'terminal is for the on-call group only; api:guest-7 is not in it';
    const requests = fake.requestsFor(refused.body.session_id);
    expect(requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', content: reason });
    expect(refused.body.reply.text).toBe(`results: ${reason}`);

    const allowed = await send('hooks-term-oncall', 'run it', 'oncall-1');
    expect(allowed.body.reply.text).not.toContain('on-call group only');
    expect(allowed.body.reply.text).toContain('ran-in-sandbox');
  });

  it('transform_tool_result redacts a card number before the result is stored or sent to the model', async () => {
    fake.handler = toolThenReport(() => [{ name: 'slow_lookup', arguments: { label: `card ${CARD} on file` } }]);
    const response = await send('hooks-redact', 'look up the card');
    expect(response.body.reply.text).toBe('results: found card [card redacted] on file');
    const seen = fake.requestsFor(response.body.session_id)[1]?.messages.at(-1)?.content ?? '';
    expect(seen).toBe('found card [card redacted] on file');
    const stored = await toolMessages(response.body.session_id);
    expect(stored).toEqual(['found card [card redacted] on file']);
    const leaked = await sql<{ n: string }>`SELECT count(*) AS n FROM messages WHERE content LIKE ${'%' + CARD + '%'} AND role = 'tool'`.execute(stack.database.db);
    expect(Number(leaked.rows[0]?.n)).toBe(0);
  });

  it('pre_gateway_dispatch drops messages from one chat with nothing enqueued', async () => {
    const before = fake.requests.length;
    const dropped = await stack.post('/v1/messages', { chat_id: 'muted-chat', user_id: 'u1', text: 'anyone there?' });
    expect(dropped.status).toBe(200);
    expect(dropped.body).toEqual({ status: 'skipped', reason: 'chat is muted' });
    const events = await stack.database.db.selectFrom('inbound_events').select('id').where('text', '=', 'anyone there?').execute();
    expect(events).toHaveLength(0);
    const routes = await sql<{ n: string }>`SELECT count(*) AS n FROM sessions WHERE chat_id = 'muted-chat'`.execute(stack.database.db);
    expect(Number(routes.rows[0]?.n)).toBe(0);
    // Another chat still gets through (and is answered), so the hook is what dropped the first.
    fake.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    const passed = await send('loud-chat', 'anyone there?');
    expect(passed.body.reply.text).toBe('echo: anyone there?');
    expect(fake.requests.length - before).toBe(1);
  });

  it('pre_gateway_dispatch drops a Telegram message from the muted chat too, and answers the others', async () => {
    fake.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    const post = (update: unknown) => stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': 'hooks-webhook-secret' });
    const muted = await post(telegram.userMessage({ chatId: 777, from: { id: 777, username: 'muted' }, text: 'from the muted chat' }));
    expect(muted.status).toBe(200);
    const other = await post(telegram.userMessage({ chatId: 778, from: { id: 778, username: 'heard' }, text: 'from another chat' }));
    expect(other.status).toBe(200);
    await waitFor(async () => telegram.botMessages(778).length > 0, { what: 'the answer in chat 778' });
    expect(telegram.botMessages(778).map((message) => message.text)).toEqual(['echo: from another chat']);
    expect(telegram.botMessages(777)).toEqual([]);
    const events = await stack.database.db.selectFrom('inbound_events').select('id').where('text', '=', 'from the muted chat').execute();
    expect(events).toHaveLength(0);
  });

  it('a hook that hangs is cut at its timeout: closed blocks with a reason the model sees, open goes on', async () => {
    fake.handler = toolThenReport((text) => [{ name: 'slow_lookup', arguments: { label: text } }]);
    const closed = await send('hooks-hang-closed', 'closed');
    expect(closed.body.reply.text).toMatch(/^results: BLOCKED by the policy hook 'hang-closed', which could not decide \(timed out after 300 ms\)/);
    expect(await countToolCalls(stack.database.db, { tool: 'slow_lookup', label: 'closed' })).toBe(0);
    const open = await send('hooks-hang-open', 'open');
    expect(open.body.reply.text).toBe('results: found open');
    expect(await countToolCalls(stack.database.db, { tool: 'slow_lookup', label: 'open' })).toBe(1);
  });

  it('pre_llm_call context joins the current user message only; the stored prompt bytes stay the same', async () => {
    fake.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    const first = await send('hooks-context', 'hello');
    const second = await send('hooks-context', 'ctx: and now?');
    expect(second.body.session_id).toBe(first.body.session_id);
    const [plain, withContext] = fake.requestsFor(first.body.session_id);
    expect(plain?.lastUserText).toBe('hello');
    expect(withContext?.lastUserText).toBe('ctx: and now?\n\n[policy: answer in one line]');
    const session = await stack.database.db.selectFrom('sessions').select('system_prompt').where('id', '=', first.body.session_id).executeTakeFirstOrThrow();
    expect(withContext?.system).toBe(session.system_prompt);
    expect(Buffer.from(withContext?.system ?? '').equals(Buffer.from(plain?.system ?? ''))).toBe(true);
    const users = (await stack.get(`/v1/sessions/${first.body.session_id}/messages`)).body.messages.filter((m: any) => m.role === 'user');
    expect(users.map((m: any) => m.content)).toEqual(['hello', 'ctx: and now?']);
  });

  it("a url hook's receiver gets signed events, a 500 is retried, and a wrong signature is detectable", async () => {
    // The receiver refuses its first request; other events' deliveries may arrive before the retry.
    const retryOf = () => receiver.received.find((r, i) => i > 0 && r.status === 200 && r.headers['x-herald-delivery'] === receiver.received[0]?.headers['x-herald-delivery']);
    await waitFor(async () => retryOf() !== undefined, { timeoutMs: 60_000, what: 'a retried hook delivery' });
    const refused = receiver.received[0];
    const retried = retryOf();
    expect(refused?.status).toBe(500);
    // The retry is the same delivery, byte for byte.
    expect(retried?.headers['x-herald-delivery']).toBe(refused?.headers['x-herald-delivery']);
    expect(retried?.body).toBe(refused?.body);
    for (const delivery of receiver.received) {
      expect(verifySignature(SECRET, delivery.body, delivery.headers['x-herald-signature'] as string)).toBe(true);
      expect(verifySignature('some-other-secret-0123456789', delivery.body, delivery.headers['x-herald-signature'] as string)).toBe(false);
      expect(verifySignature(SECRET, delivery.body.replace('post_tool_call', 'post_tool_calx'), delivery.headers['x-herald-signature'] as string)).toBe(false);
      const event = JSON.parse(delivery.body);
      expect(event).toMatchObject({ event: 'post_tool_call', hook: 'siem' });
    }
  });
});
