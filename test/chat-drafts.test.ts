import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESSION_LINE, DRAFT_CURSOR, splitMarkdown } from '@herald/platforms';
import { telegramChunks } from '@herald/platforms/telegram';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { isSummaryRequest, longText } from './support/long-chat.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { CHANNEL_ID, BOT_ID, startFakeDiscord } from './support/fake-discord.ts';
import type { FakeDiscord } from './support/fake-discord.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 35 point 4: a chat sees the answer grow by edits of one message, paced, and ends with the
// committed reply (docs/decisions/2026-12-06-chat-drafts.md).

const ALICE = { id: 42, username: 'alice' };
const DISCORD_ALICE = '500000000000000001';

/** About `chars` characters of plain words (no Markdown, so the HTML is the text). */
function words(chars: number, seed = 'word'): string {
  const out: string[] = [];
  for (let i = 0; out.join(' ').length < chars; i++) out.push(`${seed}${i % 97}`);
  return out.join(' ');
}

async function committedReply(stack: Stack, sessionPlatform: string): Promise<string> {
  return waitFor(
    async () => {
      const row = await stack.database.db
        .selectFrom('outbox')
        .select(['text', 'status'])
        .where('platform', '=', sessionPlatform)
        .where('status', '=', 'delivered')
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      return row?.text;
    },
    { what: 'a delivered reply' },
  );
}

describe('Telegram: the answer grows in one message', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  let chat = 100;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({ model: llm, testTools: true, env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: '*', HERALD_DELIVERY_POLL_MS: '100' } });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  /** A person writes in a fresh DM; resolves once the reply is delivered and no draft is left. */
  async function ask(text: string, reply: string, chunkDelayMs: number): Promise<number> {
    const chatId = ++chat;
    llm.handler = () => ({ text: reply, chunkDelayMs });
    telegram.userMessage({ chatId, from: { ...ALICE, id: chatId }, text });
    await waitFor(
      async () => {
        return stack.database.db
          .selectFrom('outbox')
          .select('id')
          .where(sql<string>`target ->> 'chatId'`, '=', String(chatId))
          .where('status', '=', 'delivered')
          .executeTakeFirst();
      },
      { what: `the reply in chat ${chatId} delivered`, timeoutMs: 30_000 },
    );
    return chatId;
  }
  const callsIn = (chatId: number, method: string) => telegram.calls.filter((call) => call.method === method && String(call.body.chat_id) === String(chatId));

  it('edits one message about once a second, and its last edit is the committed reply', async () => {
    const reply = words(900);
    const started = performance.now();
    const chatId = await ask('tell me a long story', reply, 20);
    const seconds = (performance.now() - started) / 1000;
    const sends = callsIn(chatId, 'sendMessage');
    const edits = callsIn(chatId, 'editMessageText');
    // One message: the draft, later edited into the answer; never a second one.
    expect(sends).toHaveLength(1);
    expect(telegram.botMessages(chatId)).toHaveLength(1);
    // 150 pieces of text arrived over ~3 s: a handful of edits, not one per piece.
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(edits.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    const draftEdits = edits.slice(0, -1);
    for (let i = 1; i < draftEdits.length; i++) expect(draftEdits[i]!.at - draftEdits[i - 1]!.at).toBeGreaterThanOrEqual(900);
    expect(String(sends[0]!.body.text).endsWith(DRAFT_CURSOR)).toBe(true);
    // The last edit carries the committed reply, formatted; no cursor is left.
    const last = edits.at(-1)!;
    expect(last.body.text).toBe(telegramChunks(reply)[0]!.html);
    expect(last.body.parse_mode).toBe('HTML');
    expect(telegram.botMessages(chatId)[0]!.text).toBe(telegramChunks(reply)[0]!.html);
    expect(await committedReply(stack, 'telegram')).toBe(reply);
  });

  it('honours a 429 on editMessageText: the next edit waits retry_after', async () => {
    telegram.failNext('editMessageText', { kind: 'status', code: 429, description: 'Too Many Requests: retry after 2', retryAfter: 2 });
    const reply = words(1500, 'calm');
    const chatId = await ask('slowly please', reply, 25);
    const edits = callsIn(chatId, 'editMessageText');
    const limited = edits[0]!;
    const next = edits[1]!;
    expect(next.at - limited.at).toBeGreaterThanOrEqual(1950);
    expect(edits.at(-1)!.body.text).toBe(telegramChunks(reply)[0]!.html);
    expect(telegram.botMessages(chatId)).toHaveLength(1);
  });

  it('continues in a second message once the answer outgrows 4096 characters', async () => {
    const reply = words(6000, 'long');
    const chatId = await ask('everything you know', reply, 2);
    const chunks = telegramChunks(reply);
    expect(chunks).toHaveLength(2);
    expect(callsIn(chatId, 'sendMessage')).toHaveLength(2);
    expect(telegram.botMessages(chatId).map((m) => m.text)).toEqual(chunks.map((c) => c.html));
  });

  it('shows a running tool as one short line that is replaced, not as messages', async () => {
    const chatId = ++chat;
    llm.handler = (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { text: 'The time is known now.', chunkDelayMs: 10 };
      return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'clock', sleep_ms: 2500 } }] };
    };
    telegram.userMessage({ chatId, from: { ...ALICE, id: chatId }, text: 'what time is it' });
    await waitFor(async () => (telegram.botMessages(chatId)[0]?.text === 'The time is known now.' ? true : undefined), { what: 'the answer', timeoutMs: 30_000 });
    // The tool line was shown, then replaced by the text in the same message.
    expect(callsIn(chatId, 'sendMessage')).toHaveLength(1);
    const texts = [...callsIn(chatId, 'sendMessage'), ...callsIn(chatId, 'editMessageText')].map((call) => String(call.body.text));
    expect(texts.some((text) => /slow_lookup/.test(text))).toBe(true);
    expect(telegram.botMessages(chatId)).toHaveLength(1);
  });
});

/** Long enough to stream for a few seconds: the "Approved" notice goes out first, then the draft starts. */
const AFTERWORD = 'The landlord has been paid and the receipt is filed. '.repeat(5).trim();

describe('Telegram: a turn that stops to ask the person', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({ model: llm, testTools: true, env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: String(ALICE.id), HERALD_DELIVERY_POLL_MS: '100' } });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  it('takes its draft back before the question, and drafts the answer anew below it', async () => {
    llm.handler = (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { text: `All done: ${last.content}. ${AFTERWORD}`, chunkDelayMs: 50 };
      return { text: 'Let me move the money for the rent now.', toolCalls: [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }], chunkDelayMs: 10 };
    };
    telegram.userMessage({ chatId: 42, from: ALICE, text: 'pay the rent' });
    const [notice] = await waitFor(
      async () => {
        const messages = telegram.botMessages(42);
        return messages.length === 1 && messages[0]!.reply_markup ? messages : undefined;
      },
      { what: 'only the approval question in the chat', timeoutMs: 30_000 },
    );
    expect(notice!.text).toContain('transfer 900 (rent)');
    // The draft was in the chat before the question, and is gone.
    expect(telegram.calls.filter((call) => call.method === 'deleteMessage')).toHaveLength(1);
    const approve = notice!.reply_markup!.inline_keyboard.flat().find((button) => button.text === 'Approve')!;
    telegram.pressButton({ chatId: 42, messageId: notice!.message_id, from: ALICE, data: approve.callback_data });
    const answer = await waitFor(async () => telegram.botMessages(42).find((m) => m.text === `All done: transferred 900 for rent. ${AFTERWORD}`), { what: 'the answer', timeoutMs: 30_000 });
    expect(answer.message_id).toBeGreaterThan(notice!.message_id);
    // It was drafted as it was written, in the message that became the answer.
    const drafted = telegram.calls.find((call) => call.method === 'sendMessage' && call.body.chat_id === '42' && String(call.body.text).startsWith('All done'));
    expect(String(drafted?.body.text).endsWith(DRAFT_CURSOR)).toBe(true);
    expect(telegram.botMessages(42).filter((m) => m.text.endsWith(DRAFT_CURSOR))).toEqual([]);
  });
});

describe('Telegram: a turn that compresses the conversation first', () => {
  // A small window (HERALD_CONTEXT_TOKENS, as test/long-chats.test.ts): a few long turns fill it.
  const WINDOW = 16_000;
  const ZOE = { id: 77, username: 'zoe' };
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ contextTokens: WINDOW });
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: String(ZOE.id), HERALD_DELIVERY_POLL_MS: '100', HERALD_CONTEXT_TOKENS: String(WINDOW) },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  it('shows the compression as one short line while the summary is written, and takes it back for the answer', async () => {
    llm.handler = async (request) => {
      // The summary takes a while, as a real one does: long enough for the line to show.
      if (isSummaryRequest(request)) return new Promise((resolve) => setTimeout(() => resolve({ text: '## Goal\nCarry on.' }), 2500));
      return { text: `answer ${/turn (\d+)/.exec(request.lastUserText)?.[1]}: ${longText('reply', 1200)}` };
    };
    let turn = 0;
    while (llm.requests.filter(isSummaryRequest).length === 0 && turn < 40) {
      turn++;
      telegram.userMessage({ chatId: ZOE.id, from: ZOE, text: `turn ${turn}: ${longText(`ask ${turn}`, 1500)}` });
      await waitFor(async () => telegram.botMessages(ZOE.id).find((m) => m.text.startsWith(`answer ${turn}: `) && !m.text.endsWith(DRAFT_CURSOR)), {
        what: `the answer to turn ${turn}`,
        timeoutMs: 30_000,
      });
    }
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(1);
    const sent = telegram.calls.filter((call) => call.method === 'sendMessage' && String(call.body.chat_id) === String(ZOE.id));
    const lines = sent.filter((call) => String(call.body.text) === `${COMPRESSION_LINE}${DRAFT_CURSOR}`);
    expect(lines).toHaveLength(1);
    // Taken back once the chat moved into the child session, whose turn drafted the answer anew.
    expect(telegram.calls.filter((call) => call.method === 'deleteMessage')).toHaveLength(1);
    const messages = telegram.botMessages(ZOE.id);
    expect(messages.map((m) => m.text.split(':')[0])).toEqual(Array.from({ length: turn }, (_, i) => `answer ${i + 1}`));
  });
});

describe.each<Record<string, string>>([{ HERALD_STREAMING_TELEGRAM: 'off' }, { HERALD_STREAMING: 'off' }])('Telegram with %o', (off) => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: String(ALICE.id), HERALD_DELIVERY_POLL_MS: '100', ...off },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  it('sends one plain message and edits nothing', async () => {
    const reply = words(900, 'quiet');
    llm.handler = () => ({ text: reply, chunkDelayMs: 10 });
    telegram.userMessage({ chatId: 42, from: ALICE, text: 'hello' });
    const [message] = await waitFor(async () => (telegram.botMessages(42).length > 0 ? telegram.botMessages(42) : undefined), { what: 'the reply', timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(message!.text).toBe(reply);
    expect(telegram.calls.filter((call) => call.method === 'editMessageText')).toHaveLength(0);
    expect(telegram.calls.filter((call) => call.method === 'sendMessage')).toHaveLength(1);
  });
});

describe('Discord: the answer grows in one message', () => {
  let llm: FakeLLM;
  let discord: FakeDiscord;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    discord = await startFakeDiscord();
    stack = await startStack({ model: llm, env: { ...discord.env, DISCORD_ALLOWED_USERS: DISCORD_ALICE, HERALD_DELIVERY_POLL_MS: '100' } });
    await discord.ready();
  });
  afterAll(async () => {
    await stack.stop();
    await discord.close();
  });

  const edits = (messageId?: string) =>
    discord.requests.filter((r) => r.method === 'PATCH' && r.path.startsWith(`/channels/${CHANNEL_ID}/messages/`) && (messageId === undefined || r.path.endsWith(messageId)));
  const posts = () => discord.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${CHANNEL_ID}/messages`);

  async function askInChannel(reply: string, chunkDelayMs: number): Promise<void> {
    llm.handler = () => ({ text: reply, chunkDelayMs });
    const before = discord.botMessages(CHANNEL_ID).length;
    discord.userMessage({ channelId: CHANNEL_ID, userId: DISCORD_ALICE, content: `<@${BOT_ID}> go on`, mentionBot: true });
    await waitFor(
      async () => {
        const row = await stack.database.db.selectFrom('outbox').select('id').where('status', '=', 'delivered').where('text', '=', reply).executeTakeFirst();
        return row;
      },
      { what: 'the reply delivered', timeoutMs: 30_000 },
    );
    expect(discord.botMessages(CHANNEL_ID).length).toBeGreaterThan(before);
  }

  it('edits paced, honours a 429 with its retry_after, and ends with the committed reply', async () => {
    discord.rateLimitNext(`/channels/${CHANNEL_ID}/messages/`, 2);
    const postsBefore = posts().length;
    const editsBefore = edits().length;
    const reply = words(1400, 'disc');
    const started = performance.now();
    await askInChannel(reply, 20);
    const seconds = (performance.now() - started) / 1000;
    const mine = edits().slice(editsBefore);
    expect(posts().length - postsBefore).toBe(1);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.length).toBeLessThanOrEqual(Math.ceil(seconds) + 3);
    // The first PATCH was answered 429 (retry_after 2 s): the next waited that long.
    expect(mine[1]!.at - mine[0]!.at).toBeGreaterThanOrEqual(1950);
    expect(mine.at(-1)!.body.content).toBe(reply);
    expect(discord.botMessages(CHANNEL_ID).at(-1)!.content).toBe(reply);
  });

  it('continues in further messages past 2000 characters', async () => {
    const before = discord.botMessages(CHANNEL_ID).length;
    const reply = words(4500, 'more');
    await askInChannel(reply, 1);
    const parts = splitMarkdown(reply, 2000);
    expect(
      discord
        .botMessages(CHANNEL_ID)
        .slice(before)
        .map((m) => m.content),
    ).toEqual(parts);
  });
});
