import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDOFF_NOT_YOURS_REPLY, SETHOME_OPERATORS_ONLY_REPLY } from '@herald/handoff';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * /sethome and /handoff with HERALD_OPERATORS set (docs/chat-commands.md, "Who may set a home chat or move a conversation"):
 * the home chat is profile-wide, so only an operator sets it; a group's conversation moves only at
 * the word of the person who started it or of an operator. Another member is told who can, and
 * neither home_chats nor session_handoffs changes. With no operators, see
 * test/long-chats-handoff.test.ts.
 */

const SECRET = 'people-handoff_1';
const ALICE = { id: 42, username: 'alice' };
const BOB = { id: 43, username: 'bob' };
const OPERATOR = { id: 7, username: 'ops' };
const GROUP = -100_430;
const OTHER_GROUP = -100_431;

describe('/sethome and /handoff in a group chat, with operators', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `echo: ${request.lastUserText}` }) });
    telegram = await startFakeTelegram();
    stack = await startStack({ model: llm, env: { ...openChatsEnv(SECRET, telegram), HERALD_OPERATORS: `telegram:${OPERATOR.id}` } });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const send = async (chatId: number, from: { id: number; username: string }, text: string) => {
    const mention = !text.startsWith('/');
    const chatType = chatId < 0 ? 'group' : 'private';
    const update = telegram.userMessage({ chatId, chatType, from, text: mention && chatType === 'group' ? `@${telegram.bot.username} ${text}` : text, mentionBot: mention && chatType === 'group' });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
  };
  /** Sends and returns the bot's next message in that chat. */
  const ask = async (chatId: number, from: { id: number; username: string }, text: string) => {
    const seen = telegram.botMessages(chatId).length;
    await send(chatId, from, text);
    return waitFor(async () => telegram.botMessages(chatId)[seen]?.text, { what: `the answer to ${text}` });
  };
  const groupSession = async (chatId: number) => await stack.database.db.selectFrom('sessions').select(['id', 'origin_user_id']).where('chat_id', '=', String(chatId)).executeTakeFirstOrThrow();
  const homeChats = () => stack.database.db.selectFrom('home_chats').select(['platform', 'chat_id', 'set_by']).execute();
  const handoffsOf = (sessionId: string) => stack.database.db.selectFrom('session_handoffs').select(['status', 'requested_by', 'target_chat_id']).where('session_id', '=', sessionId).execute();

  it('a member who did not start the conversation can neither /sethome nor /handoff; an operator sets home, the requester hands off', async () => {
    expect(await ask(GROUP, ALICE, 'the plan is ready')).toBe('echo: the plan is ready');
    const session = await groupSession(GROUP);
    expect(session.origin_user_id).toBe(`telegram:${ALICE.id}`);

    expect(await ask(GROUP, BOB, '/sethome')).toBe(SETHOME_OPERATORS_ONLY_REPLY);
    expect(await homeChats()).toEqual([]);
    // Bob's own DM is no different: he is not an operator.
    expect(await ask(BOB.id, BOB, '/sethome')).toBe(SETHOME_OPERATORS_ONLY_REPLY);
    expect(await homeChats()).toEqual([]);

    expect(await ask(GROUP, BOB, '/handoff telegram')).toBe(HANDOFF_NOT_YOURS_REPLY);
    expect(await handoffsOf(session.id)).toEqual([]);

    expect(await ask(OPERATOR.id, OPERATOR, '/sethome')).toMatch(/now the telegram home chat/);
    expect(await homeChats()).toEqual([{ platform: 'telegram', chat_id: String(OPERATOR.id), set_by: `telegram:${OPERATOR.id}` }]);
    // A home chat to go to changes nothing for Bob.
    expect(await ask(GROUP, BOB, '/handoff telegram')).toBe(HANDOFF_NOT_YOURS_REPLY);
    expect(await handoffsOf(session.id)).toEqual([]);

    expect(await ask(GROUP, ALICE, '/handoff telegram')).toMatch(/^Handing this conversation off to the telegram home chat/);
    const done = await waitFor(
      async () => {
        const rows = await handoffsOf(session.id);
        return rows[0]?.status === 'done' ? rows : undefined;
      },
      { what: 'the handoff to finish' },
    );
    expect(done).toEqual([{ status: 'done', requested_by: `telegram:${ALICE.id}`, target_chat_id: String(OPERATOR.id) }]);
  });

  it('an operator may /handoff a group conversation someone else started', async () => {
    expect(await ask(OTHER_GROUP, ALICE, 'draft the notes')).toBe('echo: draft the notes');
    const session = await groupSession(OTHER_GROUP);
    expect(await ask(OTHER_GROUP, BOB, '/handoff telegram')).toBe(HANDOFF_NOT_YOURS_REPLY);
    expect(await handoffsOf(session.id)).toEqual([]);
    expect(await ask(OTHER_GROUP, OPERATOR, '/handoff telegram')).toMatch(/^Handing this conversation off/);
    const rows = await handoffsOf(session.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.requested_by).toBe(`telegram:${OPERATOR.id}`);
  });
});
