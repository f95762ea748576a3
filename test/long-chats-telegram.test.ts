import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { isSummaryRequest, longText, summariserThatKeeps } from './support/long-chat.ts';

const SECRET = 'webhook-secret_1';
const ALICE = { id: 42, username: 'alice' };

describe('/compress from a Telegram chat', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: { ...telegram.env, HERALD_CONTEXT_TOKENS: '16000', HERALD_DELIVERY_POLL_MS: '100', TELEGRAM_MODE: 'webhook', TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_ALLOWED_USERS: String(ALICE.id) },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const say = async (text: string, count: number) => {
    const update = telegram.userMessage({ chatId: 42, from: ALICE, text });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => (telegram.botMessages(42).length >= count ? telegram.botMessages(42).map((m) => m.text) : undefined), {
      what: `${count} bot messages`,
    });
  };

  it('answers in the chat, and the next message goes on in the child session of the same chat', async () => {
    llm.handler = (request) => (isSummaryRequest(request) ? summariserThatKeeps(request, /codename/i) : { text: `answer: ${longText('a', 1500)}` });
    for (let i = 1; i <= 10; i++) await say(`message ${i} ${longText(`m${i}`, 1500)}`, i);
    const texts = await say('/compress', 11);
    expect(texts.at(-1)).toMatch(/^Compressed: \d+ earlier messages are now a summary/);
    await say('and now?', 12);
    const sessions = await stack.database.db.selectFrom('sessions').select(['id', 'parent_session_id', 'end_reason', 'chat_id']).orderBy('created_at').execute();
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).toMatchObject({ end_reason: 'compression', chat_id: '42' });
    expect(sessions[1]).toMatchObject({ parent_session_id: sessions[0]!.id, end_reason: null, chat_id: '42' });
    const last = llm.requests.filter((request) => !isSummaryRequest(request)).at(-1)!;
    expect(last.sessionKey).toBe(sessions[1]!.id);
  });
});
