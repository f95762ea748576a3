import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@herald/core';
import { DeliveryConsumer, enqueueOutbound } from '@herald/delivery';
import { REFUSAL_TEXT } from '@herald/platforms';
import { TelegramIngress, TelegramSender } from '@herald/platforms/telegram';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { countQueries } from './support/db-probes.ts';
import { replicaOf, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const SECRET = 'webhook-secret_1';
const ALICE = { id: 42, username: 'alice' };

/** A fake model and a fake Telegram, and a stack whose Telegram adapter talks to the fake. */
async function startTelegramStack(env: Record<string, string>): Promise<{ llm: FakeLLM; telegram: FakeTelegram; stack: Stack }> {
  const llm = await startFakeOpenAI();
  const telegram = await startFakeTelegram();
  const stack = await startStack({ model: llm, env: { ...telegram.env, HERALD_DELIVERY_POLL_MS: '100', ...env } });
  return { llm, telegram, stack };
}

describe('Telegram, webhook mode, end to end', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    ({ llm, telegram, stack } = await startTelegramStack({
      TELEGRAM_MODE: 'webhook',
      TELEGRAM_WEBHOOK_SECRET: SECRET,
      TELEGRAM_WEBHOOK_URL: 'https://herald.example.com/telegram/webhook',
      TELEGRAM_ALLOWED_USERS: `${ALICE.id},@bob`,
      // Replies go out whole: these tests are about the outbox's sends (a 429 on its sendMessage);
      // answers growing by edits are tested in chat-drafts.test.ts.
      HERALD_STREAMING_TELEGRAM: 'off',
    }));
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const post = (update: unknown, secret: string | null = SECRET) => stack.post('/telegram/webhook', update, secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret });
  const botTexts = (chatId: number) => telegram.botMessages(chatId).map((message) => message.text);
  const waitForBotMessages = (chatId: number, count: number) =>
    waitFor(async () => (telegram.botMessages(chatId).length >= count ? telegram.botMessages(chatId) : undefined), {
      what: `${count} bot messages in chat ${chatId}`,
    });

  it('registered the webhook with its secret at start', () => {
    expect(telegram.webhook).toEqual({ url: 'https://herald.example.com/telegram/webhook', secret: SECRET });
  });

  it('answers a DM, ignores the redelivered update, shows typing, and reports the receipt', async () => {
    // The answer waits until the chat shows "typing", so the indicator has had its chance.
    const typing = () => telegram.calls.some((call) => call.method === 'sendChatAction' && call.body.chat_id === '42');
    llm.handler = async (request) => {
      await waitFor(async () => typing(), { what: 'typing shown' });
      return { text: `echo: ${request.lastUserText}` };
    };
    const update = telegram.userMessage({ chatId: 42, from: ALICE, text: 'hello **there**' });
    const first = await post(update);
    expect(first.status).toBe(200);
    expect(first.body.outcome).toBe('accepted');
    const again = await post(update);
    expect(again.body.outcome).toBe('duplicate');
    const [reply] = await waitForBotMessages(42, 1);
    expect(reply?.text).toBe('echo: hello <b>there</b>');
    expect(reply?.parse_mode).toBe('HTML');
    expect(typing()).toBe(true);
    const event = await stack.database.db
      .selectFrom('inbound_events')
      .select(['session_id', 'platform_message_id'])
      .where('dedupe_key', '=', `telegram:123456:${update.update_id}`)
      .executeTakeFirstOrThrow();
    expect(event.platform_message_id).toBe(String(update.message.message_id));
    const deliveries = await waitFor(async () => {
      const response = await stack.get(`/v1/sessions/${event.session_id}/deliveries`);
      return response.body.deliveries?.[0]?.status === 'delivered' ? response.body.deliveries : undefined;
    });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ platform: 'telegram', source: 'reply', message_ids: [String(reply?.message_id)], last_error: null });
    expect(llm.requests.filter((request) => request.lastUserText === 'hello **there**')).toHaveLength(1);
  });

  it('asks for approval in the chat with buttons; a press resumes the turn, and clarify offers its choices as buttons', async () => {
    // terminal with a dangerous command needs approval; clarify asks with choices.
    llm.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') return { text: `done: ${last.content.slice(0, 200)}` };
      if (request.lastUserText === 'clean up') return { toolCalls: [{ name: 'terminal', arguments: { command: 'mkdir -p tmp && rm -r tmp && echo cleaned' } }] };
      if (request.lastUserText === 'pick one') return { toolCalls: [{ name: 'clarify', arguments: { question: 'Which colour?', choices: ['Red', 'Blue'] } }] };
      return { text: `echo: ${request.lastUserText}` };
    };
    await post(telegram.userMessage({ chatId: 77, from: ALICE, text: 'clean up' }));
    const [prompt] = await waitForBotMessages(77, 1);
    expect(prompt?.text).toContain('Approval needed:');
    const buttons = prompt?.reply_markup?.inline_keyboard.flat() ?? [];
    expect(buttons.map((b) => b.text)).toEqual(['Approve', 'Allow for session', 'Deny']);
    const approve = buttons.find((b) => b.text === 'Approve')!;
    expect(Buffer.byteLength(approve.callback_data)).toBeLessThanOrEqual(64);
    // Someone not on the allowlist cannot press it for Alice.
    const stranger = await post(telegram.pressButton({ chatId: 77, messageId: prompt!.message_id, from: { id: 1999 }, data: approve.callback_data }));
    expect(stranger.status).toBe(200);
    const pending = await stack.database.db.selectFrom('tool_waits').select(['status', 'answered_by']).where('tool_name', '=', 'terminal').execute();
    expect(pending).toEqual([{ status: 'pending', answered_by: null }]);
    const pressed = await post(telegram.pressButton({ chatId: 77, messageId: prompt!.message_id, from: ALICE, data: approve.callback_data }));
    expect(pressed.body.outcome).toBe('accepted');
    expect(telegram.calls.some((call) => call.method === 'answerCallbackQuery')).toBe(true);
    const messages = await waitFor(async () => {
      const texts = botTexts(77);
      return texts.some((text) => text.startsWith('done:')) ? texts : undefined;
    });
    expect(messages.some((text) => /^Approved: /.test(text))).toBe(true);
    expect(messages.find((text) => text.startsWith('done:'))).toContain('cleaned');
    const resolved = await stack.database.db.selectFrom('tool_waits').select(['status', 'answered_by']).where('tool_name', '=', 'terminal').execute();
    expect(resolved).toEqual([{ status: 'approved', answered_by: `telegram:${ALICE.id}` }]);

    await post(telegram.userMessage({ chatId: 78, from: ALICE, text: 'pick one' }));
    const [question] = await waitForBotMessages(78, 1);
    expect(question?.text).toContain('Which colour?');
    const choices = question?.reply_markup?.inline_keyboard.flat() ?? [];
    expect(choices.map((b) => b.text)).toEqual(['Red', 'Blue']);
    await post(telegram.pressButton({ chatId: 78, messageId: question!.message_id, from: ALICE, data: choices[1]!.callback_data }));
    const answered = await waitFor(async () => botTexts(78).find((text) => text.startsWith('done:')));
    expect(answered).toBe('done: The person answered: Blue');
  });

  it('refuses a wrong secret and a malformed update, and loses nothing', async () => {
    const update = telegram.userMessage({ chatId: 42, from: ALICE, text: 'after the noise' });
    expect((await post(update, 'wrong')).status).toBe(401);
    expect((await post(update, null)).status).toBe(401);
    const malformed = await post({ message: { text: 'no update id' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.field).toBe('update_id');
    expect((await stack.post('/telegram/webhook', 'not json', { 'x-telegram-bot-api-secret-token': SECRET, 'content-type': 'application/json' })).status).toBe(400);
    llm.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    expect((await post(update)).status).toBe(200);
    await waitFor(async () => botTexts(42).includes('echo: after the noise'));
  });

  it('answers in a group only when mentioned or replied to, quoting the message', async () => {
    llm.handler = (request) => ({ text: `group: ${request.lastUserText}` });
    const group = -1001;
    const bob = { id: 7, username: 'bob' };
    const ignored = telegram.userMessage({ chatId: group, chatType: 'supergroup', from: bob, text: 'just chatting' });
    expect((await post(ignored)).body.outcome).toBe('ignored');
    const mention = telegram.userMessage({ chatId: group, chatType: 'supergroup', from: bob, text: '@herald_test_bot what time is it', mentionBot: true });
    expect((await post(mention)).body.outcome).toBe('accepted');
    const [answer] = await waitForBotMessages(group, 1);
    expect(answer?.text).toBe('group: what time is it');
    expect(answer?.reply_to).toBe(mention.message.message_id);
    const reply = telegram.userMessage({ chatId: group, chatType: 'supergroup', from: bob, text: 'and tomorrow?', replyToMessageId: answer!.message_id });
    expect((await post(reply)).body.outcome).toBe('accepted');
    await waitForBotMessages(group, 2);
    expect(botTexts(group)[1]).toBe('group: and tomorrow?');
  });

  it('keeps a forum topic as its own session and answers inside the topic', async () => {
    llm.handler = (request) => ({ text: `turns seen: ${request.messages.filter((m) => m.role === 'user').length}` });
    const forum = -1002;
    const bob = { id: 7, username: 'bob' };
    const general = telegram.userMessage({ chatId: forum, chatType: 'supergroup', from: bob, text: '@herald_test_bot one', mentionBot: true });
    await post(general);
    await waitForBotMessages(forum, 1);
    const topic = telegram.userMessage({ chatId: forum, chatType: 'supergroup', from: bob, text: '@herald_test_bot two', mentionBot: true, threadId: 77 });
    await post(topic);
    const messages = await waitForBotMessages(forum, 2);
    expect(messages[1]?.message_thread_id).toBe(77);
    // A fresh session: the topic's first turn sees one user message, not the general chat's.
    expect(messages[1]?.text).toBe('turns seen: 1');
    const sessions = await stack.database.db.selectFrom('sessions').select(['thread_id']).where('chat_id', '=', String(forum)).execute();
    expect(sessions.map((s) => s.thread_id).sort()).toEqual(['77', null]);
  });

  it('gives someone not on the allowlist one polite refusal and no model call', async () => {
    const stranger = { id: 999, username: 'mallory' };
    const before = llm.requests.length;
    const first = telegram.userMessage({ chatId: 999, from: stranger, text: 'let me in' });
    expect((await post(first)).body.outcome).toBe('refused');
    const second = telegram.userMessage({ chatId: 999, from: stranger, text: 'please?' });
    expect((await post(second)).body.outcome).toBe('refused');
    await waitForBotMessages(999, 1);
    // Give a second refusal every chance to show up before checking there is none.
    await waitFor(async () => {
      const rows = await stack.database.db.selectFrom('outbox').select('status').where('source', '=', 'refusal').execute();
      return rows.length > 0 && rows.every((row) => row.status === 'delivered');
    });
    expect(botTexts(999)).toEqual([`${REFUSAL_TEXT}999`]);
    expect(llm.requests.length).toBe(before);
  });

  it('answers chat commands through the outbox, the same as the API', async () => {
    const help = telegram.userMessage({ chatId: 42, from: ALICE, text: '/help' });
    await post(help);
    await waitFor(async () => botTexts(42).some((text) => text.startsWith('Commands:')));
    const status = telegram.userMessage({ chatId: 42, from: ALICE, text: '/status' });
    await post(status);
    await waitFor(async () => botTexts(42).some((text) => /^Session [0-9a-f-]{36}/.test(text)));
    const api = await stack.post('/v1/messages?wait=5', { chat_id: 'api-chat', user_id: 'u', text: '/help' });
    expect(api.body.reply.text).toMatch(/\/queue <mode>/);
  });

  it('splits a long reply on paragraph and code boundaries, and falls back to plain text when Telegram rejects the HTML', async () => {
    const paragraph = (n: number) => `Paragraph ${n}: ${'word '.repeat(500).trim()}`;
    const code = '```ts\n' + Array.from({ length: 200 }, (_, i) => `const value${i} = ${i} < 1;`).join('\n') + '\n```';
    llm.handler = () => ({ text: [paragraph(1), paragraph(2), code, 'The **end** BROKEN'].join('\n\n') });
    telegram.rejectHtml = (text) => text.includes('BROKEN');
    const chatId = 4242;
    const update = telegram.userMessage({ chatId, from: { id: 42, username: 'alice' }, text: 'long please' });
    await post(update);
    const messages = await waitFor(async () => {
      const sent = telegram.botMessages(chatId);
      return sent.some((m) => m.text.includes('BROKEN')) ? sent : undefined;
    });
    telegram.rejectHtml = undefined;
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) expect(message.text.length).toBeLessThanOrEqual(4096);
    // The code block is cut between lines, each piece a complete <pre> block.
    const codeParts = messages.filter((m) => m.text.includes('const value') && m.parse_mode === 'HTML');
    expect(codeParts.length).toBeGreaterThanOrEqual(2);
    for (const part of codeParts) {
      expect(part.text.split('<pre>').length).toBe(part.text.split('</pre>').length);
      const inner = /<pre><code class="language-ts">([\s\S]*)<\/code><\/pre>/.exec(part.text)?.[1] ?? '';
      for (const line of inner.split('\n')) expect(line).toMatch(/^const value\d+ = \d+ &lt; 1;$/);
    }
    expect(codeParts[0]?.text).toContain('&lt;');
    const last = messages[messages.length - 1]!;
    expect(last.parse_mode).toBeUndefined();
    expect(last.text.endsWith('```\n\nThe **end** BROKEN')).toBe(true);
    // Every part of the reply, in order, once.
    const joined = messages.map((m) => m.text).join('\n');
    expect(joined.indexOf('Paragraph 1')).toBeLessThan(joined.indexOf('Paragraph 2'));
    expect(joined.match(/Paragraph 1/g)).toHaveLength(1);
  });

  it('shows a delivery that failed for good through the API', async () => {
    llm.handler = () => ({ text: 'you will not see this' });
    telegram.failNext('sendMessage', { kind: 'status', code: 403, description: 'Forbidden: bot was blocked by the user' });
    const update = telegram.userMessage({ chatId: 4444, from: ALICE, text: 'blocked' });
    await post(update);
    const event = await waitFor(async () => stack.database.db.selectFrom('inbound_events').select('session_id').where('dedupe_key', '=', `telegram:123456:${update.update_id}`).executeTakeFirst());
    const failed = await waitFor(async () => {
      const response = await stack.get(`/v1/sessions/${event.session_id}/deliveries`);
      return response.body.deliveries?.[0]?.status === 'failed' ? response.body.deliveries[0] : undefined;
    });
    expect(failed).toMatchObject({ attempts: 1, last_error: expect.stringContaining('bot was blocked by the user'), message_ids: [] });
    expect(telegram.botMessages(4444)).toEqual([]);
  });

  it('waits out a 429 as Telegram asks and delivers once', async () => {
    llm.handler = () => ({ text: 'after the rate limit' });
    telegram.failNext('sendMessage', { kind: 'status', code: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 });
    const chatId = 4343;
    const update = telegram.userMessage({ chatId, from: ALICE, text: 'hi' });
    await post(update);
    await waitForBotMessages(chatId, 1);
    const row = await waitFor(async () => {
      const found = await stack.database.db
        .selectFrom('outbox')
        .selectAll()
        .where('target', '@>', JSON.stringify({ chatId: String(chatId) }) as any)
        .executeTakeFirst();
      return found?.status === 'delivered' ? found : undefined;
    });
    expect(row.attempts).toBe(2);
    expect(botTexts(chatId)).toEqual(['after the rate limit']);
  });
});

describe('Telegram sender, ambiguous sends', () => {
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    telegram = await startFakeTelegram();
    stack = await startStack({ workers: 0 });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const deliver = async (key: string, chatId: number, text: string, replyTo: number | undefined) => {
    const sender = TelegramSender.fromConfig({ botToken: telegram.token, apiRoot: telegram.apiRoot, timeoutSeconds: 60 });
    const consumer = new DeliveryConsumer({
      db: stack.database.db,
      senders: new Map([['telegram', sender]]),
      logger: silentLogger,
      pollIntervalMs: 50,
      sendTimeoutMs: 300,
      retryBaseMs: 20,
    });
    consumer.start();
    try {
      await enqueueOutbound(stack.database.db, {
        idempotencyKey: key,
        platform: 'telegram',
        target: { chatId: String(chatId), chatType: 'dm', ...(replyTo === undefined ? {} : { replyTo: String(replyTo) }) },
        text,
        source: 'test',
      });
      return await waitFor(async () => {
        const row = await stack.database.db.selectFrom('outbox').selectAll().where('idempotency_key', '=', key).executeTakeFirstOrThrow();
        return row.status === 'delivered' || row.status === 'failed' ? row : undefined;
      });
    } finally {
      await consumer.stop();
    }
  };

  it('reconciles a send that arrived but timed out, instead of sending it again', async () => {
    const update = telegram.userMessage({ chatId: 50, from: ALICE, text: 'anchor' });
    telegram.failNext('sendMessage', { kind: 'store-then-hang' });
    const row = await deliver('amb:arrived', 50, 'the answer', update.message.message_id);
    expect(row.status).toBe('delivered');
    expect(telegram.botMessages(50).map((m) => m.text)).toEqual(['the answer']);
    expect(row.receipt).toEqual({ messageIds: [String(telegram.botMessages(50)[0]!.message_id)] });
    expect(row.attempts).toBe(2);
    expect(telegram.calls.filter((call) => call.method === 'editMessageText').length).toBeGreaterThan(0);
  });

  it('sends again when the probe proves the timed-out send never arrived', async () => {
    const update = telegram.userMessage({ chatId: 51, from: ALICE, text: 'anchor' });
    telegram.failNext('sendMessage', { kind: 'drop' });
    const row = await deliver('amb:lost', 51, 'second try', update.message.message_id);
    expect(row.status).toBe('delivered');
    expect(telegram.botMessages(51).map((m) => m.text)).toEqual(['second try']);
  });

  it('does not resend blindly when there is nothing to check against, and says so', async () => {
    telegram.userMessage({ chatId: 52, from: ALICE, text: 'no anchor given' });
    telegram.failNext('sendMessage', { kind: 'store-then-hang' });
    const row = await deliver('amb:blind', 52, 'maybe sent', undefined);
    expect(row.status).toBe('failed');
    expect(row.last_error).toMatch(/^ambiguous: .*not resent/);
    expect(telegram.botMessages(52)).toHaveLength(1);
  });
});

describe('Telegram, polling mode', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    ({ llm, telegram, stack } = await startTelegramStack({ TELEGRAM_MODE: 'polling', TELEGRAM_ALLOWED_USERS: '*', TELEGRAM_POLL_TIMEOUT_SECONDS: '1' }));
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  it('polls with one process per bot token across replicas and answers every message once', async () => {
    llm.handler = (request) => ({ text: `polled: ${request.lastUserText}` });
    // The stack's poller first (its platform adapter loads on demand, so it may still be starting).
    await waitFor(async () => ((await stack.database.db.selectFrom('platform_leases').select('owner').where('name', '=', 'telegram-poll:123456').executeTakeFirst()) ? true : undefined), {
      what: "the stack's poller holding its lease",
    });
    // A second ingress replica on the same database and bot token.
    const claims = countQueries(stack.database.db, 'platform_leases');
    const second = replicaOf(stack, claims.db);
    const replica = new TelegramIngress({ ...second.deps, config: stack.config.platforms.telegram!, pollLeaseTtlMs: 600 });
    replica.startPolling();
    try {
      for (let i = 0; i < 4; i++) telegram.userMessage({ chatId: 60 + i, from: { id: 60 + i }, text: `message ${i}` });
      for (let i = 0; i < 4; i++) {
        await waitFor(async () => (telegram.botMessages(60 + i).length > 0 ? true : undefined), { what: `answer in chat ${60 + i}` });
      }
      for (let i = 0; i < 4; i++) expect(telegram.botMessages(60 + i).map((m) => m.text)).toEqual([`polled: message ${i}`]);
      // The replica kept trying for the poller's lease all along, and never polled.
      await waitFor(async () => claims.count() >= 2, { what: 'two lease claims by the replica' });
      expect(telegram.maxConcurrentPolls).toBe(1);
      const leases = await stack.database.db.selectFrom('platform_leases').selectAll().execute();
      expect(leases.map((lease) => [lease.name, lease.owner === 'replica-2'])).toEqual([['telegram-poll:123456', false]]);
    } finally {
      await replica.stop();
      await second.close();
    }
  });
});
