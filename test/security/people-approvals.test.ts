import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_YOURS_REPLY } from '@herald/waits';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeRequest, FakeReply } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { BOT_ID, CHANNEL_ID, startFakeDiscord } from '../support/fake-discord.ts';
import type { FakeDiscord } from '../support/fake-discord.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 17, point 8: in a group chat an approval (or a question) belongs to the person whose turn
 * asked. Another member's button, /approve, /deny, /stop or bare "yes" is refused with a clear
 * message and the wait stays pending; the requester's answer works, and so does an operator's
 * (HERALD_OPERATORS, by qualified id). The same through the API's POST /v1/waits/:id.
 */

const SECRET = 'people-approvals_1';
const ALICE = { id: 42, username: 'alice' };
const BOB = { id: 43, username: 'bob' };
const OPERATOR = { id: 7, username: 'ops' };
const GROUP = -100_420;
const D_ALICE = '500000000000000042';
const D_BOB = '500000000000000043';

/** Pays when asked (900 needs approval), asks when told to, and reports the tool's result. */
function payOrAsk(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `done: ${last.content.slice(0, 200)}` };
  const text = request.lastUserText;
  if (text.includes('pay ')) return { toolCalls: [{ name: 'wire_transfer', arguments: { label: text.split('pay ')[1] ?? 'x', amount: 900 } }] };
  if (text.includes('ask me')) return { toolCalls: [{ name: 'clarify', arguments: { question: 'Which city?' } }] };
  return { text: `echo: ${text}` };
}

describe('approvals belong to the person whose turn asked', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let discord: FakeDiscord;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: payOrAsk });
    telegram = await startFakeTelegram();
    discord = await startFakeDiscord();
    stack = await startStack({
      model: llm,
      testTools: true,
      env: { ...openChatsEnv(SECRET, telegram, discord), HERALD_OPERATORS: `telegram:${OPERATOR.id},api:ops` },
    });
    await discord.ready();
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
    await discord.close();
  });

  const tg = async (from: { id: number; username: string }, text: string) => {
    const mention = !text.startsWith('/');
    const update = telegram.userMessage({ chatId: GROUP, chatType: 'group', from, text: mention ? `@${telegram.bot.username} ${text}` : text, mentionBot: mention });
    const response = await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET });
    expect(response.status).toBe(200);
    return response;
  };
  const press = (from: { id: number }, messageId: number, data: string) =>
    stack.post('/telegram/webhook', telegram.pressButton({ chatId: GROUP, messageId, from, data }), { 'x-telegram-bot-api-secret-token': SECRET });
  const groupTexts = () => telegram.botMessages(GROUP).map((message) => message.text);
  const nextGroupText = async (after: number, test: (text: string) => boolean, what: string) => waitFor(async () => groupTexts().slice(after).find(test), { what });
  const waitStatus = async (label: string) => {
    const row = await stack.database.db.selectFrom('tool_waits').select(['status', 'answered_by']).where('arguments', 'like', `%${label}%`).executeTakeFirst();
    return row;
  };

  it('Telegram group: another member\'s button, /approve, /deny, /stop and "yes" are refused; the requester\'s press works', async () => {
    let seen = groupTexts().length;
    await tg(ALICE, 'pay the rent');
    const prompt = await waitFor(
      async () =>
        telegram
          .botMessages(GROUP)
          .slice(seen)
          .find((m) => m.text.startsWith('Approval needed:')),
      { what: 'the approval prompt' },
    );
    const approve = prompt.reply_markup!.inline_keyboard.flat().find((b) => b.text === 'Approve')!;
    seen = groupTexts().length;

    expect((await press(BOB, prompt.message_id, approve.callback_data)).status).toBe(200);
    for (const text of ['/approve', '/approve session', '/deny no way', '/stop', 'yes']) await tg(BOB, text);
    const refusals = await waitFor(
      async () => {
        const found = groupTexts()
          .slice(seen)
          .filter((text) => text === NOT_YOURS_REPLY);
        return found.length >= 6 ? found : undefined;
      },
      { what: 'six refusals' },
    );
    expect(refusals).toHaveLength(6);
    expect(await waitStatus('the rent')).toEqual({ status: 'pending', answered_by: null });
    expect(
      groupTexts()
        .slice(seen)
        .some((text) => text.startsWith('Approved') || text.startsWith('Denied') || text.startsWith('done:')),
    ).toBe(false);

    seen = groupTexts().length;
    await press(ALICE, prompt.message_id, approve.callback_data);
    const done = await nextGroupText(seen, (text) => text.startsWith('done:'), 'the resumed turn');
    expect(done).toContain('transferred 900 for the rent');
    expect(await waitStatus('the rent')).toEqual({ status: 'approved', answered_by: `telegram:${ALICE.id}` });
  });

  it("Telegram group: an operator listed by qualified id may approve someone else's request", async () => {
    let seen = groupTexts().length;
    await tg(ALICE, 'pay the plumber');
    await nextGroupText(seen, (text) => text.startsWith('Approval needed:'), 'the approval prompt');
    seen = groupTexts().length;
    await tg(OPERATOR, '/approve');
    expect(await nextGroupText(seen, (text) => text.startsWith('done:'), 'the resumed turn')).toContain('the plumber');
    expect(await waitStatus('the plumber')).toEqual({ status: 'approved', answered_by: `telegram:${OPERATOR.id}` });
  });

  it("Discord channel: another member's button and /approve are refused; the requester's works", async () => {
    const texts = () => discord.botMessages(CHANNEL_ID).map((message) => message.content);
    let seen = texts().length;
    discord.userMessage({ channelId: CHANNEL_ID, userId: D_ALICE, content: `<@${BOT_ID}> pay the cleaner`, mentionBot: true });
    const prompt = await waitFor(
      async () =>
        discord
          .botMessages(CHANNEL_ID)
          .slice(seen)
          .find((m) => m.content.startsWith('Approval needed:')),
      { what: 'the approval prompt' },
    );
    const approve = prompt.components!.flatMap((row) => row.components).find((b) => b.label === 'Approve')!;
    seen = texts().length;
    discord.pressButton({ channelId: CHANNEL_ID, userId: D_BOB, messageId: prompt.id, customId: approve.custom_id });
    discord.userMessage({ channelId: CHANNEL_ID, userId: D_BOB, content: `<@${BOT_ID}> yes`, mentionBot: true });
    const command = discord.slashCommand({ channelId: CHANNEL_ID, userId: D_BOB, name: 'approve' });
    const [edited] = await waitFor(
      async () => {
        const replies = discord.botMessages(`interaction:interaction-token-${command}`);
        return replies.length > 0 ? replies : undefined;
      },
      { what: 'the slash command reply' },
    );
    expect(edited?.content).toBe(NOT_YOURS_REPLY);
    await waitFor(
      async () =>
        texts()
          .slice(seen)
          .filter((text) => text === NOT_YOURS_REPLY).length >= 2
          ? true
          : undefined,
      { what: 'two refusals in the channel' },
    );
    expect(await waitStatus('the cleaner')).toEqual({ status: 'pending', answered_by: null });

    seen = texts().length;
    discord.pressButton({ channelId: CHANNEL_ID, userId: D_ALICE, messageId: prompt.id, customId: approve.custom_id });
    const done = await waitFor(
      async () =>
        texts()
          .slice(seen)
          .find((text) => text.startsWith('done:')),
      { what: 'the resumed turn' },
    );
    expect(done).toContain('transferred 900 for the cleaner');
    expect(await waitStatus('the cleaner')).toEqual({ status: 'approved', answered_by: `discord:${D_ALICE}` });
  });

  it('API: POST /v1/waits/:id needs the requester (bare or qualified id) or an operator; others get 403 and the wait stays', async () => {
    const asked = await stack.post('/v1/messages?wait=20', { chat_id: 'shared-api', user_id: 'u1', text: 'pay the landlord' });
    expect(asked.status).toBe(202);
    const waitId: string = asked.body.waiting.id;
    const answer = (body: Record<string, unknown>) => stack.post(`/v1/waits/${waitId}`, body);

    const anonymous = await answer({ decision: 'approve' });
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.error.field).toBe('user_id');
    for (const user of ['u2', 'telegram:u1', 'api:u2']) {
      const refused = await answer({ decision: 'approve', user_id: user });
      expect(refused.status, user).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'not_requester', message: NOT_YOURS_REPLY });
    }
    // The same person's bare "yes" in the chat would answer; someone else's is refused there too.
    const bystander = await stack.post('/v1/messages?wait=5', { chat_id: 'shared-api', user_id: 'u2', text: 'yes' });
    expect(bystander.body.reply.text).toBe(NOT_YOURS_REPLY);
    expect((await stack.get(`/v1/waits/${waitId}`)).body.status).toBe('pending');

    const approved = await answer({ decision: 'approve', user_id: 'api:u1' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved' });
    expect((await stack.waitForEvent(asked.body.event_id)).reply.text).toContain('transferred 900 for the landlord');

    const again = await stack.post('/v1/messages?wait=20', { chat_id: 'shared-api', user_id: 'u1', text: 'pay the gardener' });
    const byOperator = await stack.post(`/v1/waits/${again.body.waiting.id}`, { decision: 'deny', user_id: 'ops', reason: 'not now' });
    expect(byOperator.status).toBe(200);
    expect(byOperator.body.status).toBe('denied');
  });

  it("API: a clarify question is answered only by the person asked; another member's message waits its turn", async () => {
    const asked = await stack.post('/v1/messages?wait=20', { chat_id: 'shared-ask', user_id: 'u1', text: 'ask me something' });
    expect(asked.body.waiting).toMatchObject({ kind: 'clarify' });
    const other = await stack.post('/v1/messages', { chat_id: 'shared-ask', user_id: 'u2', text: 'Paris' });
    expect(other.status).toBe(202);
    expect((await stack.get(`/v1/waits/${asked.body.waiting.id}`)).body.status).toBe('pending');
    const refused = await stack.post(`/v1/waits/${asked.body.waiting.id}`, { answer: 'Paris', user_id: 'u2' });
    expect(refused.status).toBe(403);

    await stack.post('/v1/messages', { chat_id: 'shared-ask', user_id: 'u1', text: 'Rome' });
    const first = await stack.waitForEvent(asked.body.event_id);
    expect(first.reply.text).toContain('Rome');
    // u2's message was kept and answered on its own, after the parked turn.
    expect((await stack.waitForEvent(other.body.event_id)).reply.text).toBe('echo: Paris');
  });
});
