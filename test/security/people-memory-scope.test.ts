import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 17, point 5 (memory half): one person's memory write must not land where other people read
 * it. The agent's notes (target memory) are the writer's own unless the operator makes the profile's
 * notes shared (`memory_shared`); a group chat's prompt, which everyone in it talks to, carries the
 * profile-wide notes only.
 */

const SECRET = 'people-memory_1';
const ALICE = { id: 4201, username: 'alice' };
const BOB = { id: 4202, username: 'bob' };
const GROUP = -100_777;

/** "note X" saves X in the agent's notes (target memory); the tool's answer is echoed back. */
function noter(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `saved: ${last.content.slice(0, 500)}` };
  const text = request.lastUserText;
  if (text.startsWith('note ')) return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'memory', content: text.slice(5) } }] };
  return { text: `echo: ${text}` };
}

describe('memory writes are scoped to the writer', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: noter });
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: openChatsEnv(SECRET, telegram),
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  /** Sends in the group (addressed to the bot) or in the person's DM; resolves with the bot's answer. */
  const say = async (from: { id: number; username: string }, text: string, where: 'group' | 'dm') => {
    const chatId = where === 'group' ? GROUP : from.id;
    const before = telegram.botMessages(chatId).length;
    const addressed = where === 'group' && !text.startsWith('/');
    const update = telegram.userMessage({
      chatId,
      chatType: where === 'group' ? 'group' : 'private',
      from,
      text: addressed ? `@${telegram.bot.username} ${text}` : text,
      mentionBot: addressed,
    });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => telegram.botMessages(chatId)[before]?.text, { what: `the answer to ${text}` });
  };
  const promptOf = async (chatId: number, chatType: 'group' | 'dm') => {
    const row = await stack.database.db
      .selectFrom('session_routes')
      .innerJoin('sessions', 'sessions.id', 'session_routes.session_id')
      .select('sessions.system_prompt')
      .where('session_routes.session_key', '=', `agent:main:telegram:${chatType}:${chatId}`)
      .executeTakeFirstOrThrow();
    return row.system_prompt ?? '';
  };

  it("person A's note in a group chat is in neither person B's memory view nor B's prompts", async () => {
    const saved = await say(ALICE, 'note the deploy key is in vault 7', 'group');
    expect(saved).toContain('vault 7');
    const rows = await stack.database.db.selectFrom('memory_entries').select(['store', 'user_id', 'content']).execute();
    expect(rows).toEqual([{ store: 'memory', user_id: `telegram:${ALICE.id}`, content: 'the deploy key is in vault 7' }]);

    // B in the same group chat, in a fresh session: B's own write shows B's notes only.
    await say(BOB, '/new', 'group');
    const bobSaved = await say(BOB, 'note standup is at nine', 'group');
    expect(bobSaved).toContain('standup is at nine');
    expect(bobSaved).not.toContain('vault 7');
    const groupPrompt = await promptOf(GROUP, 'group');
    expect(groupPrompt).not.toContain('vault 7');

    // Next sessions: B's DM prompt has B's note and not A's; A's has A's.
    await say(BOB, 'hello', 'dm');
    const bobPrompt = await promptOf(BOB.id, 'dm');
    expect(bobPrompt).toContain('standup is at nine');
    expect(bobPrompt).not.toContain('vault 7');
    await say(ALICE, 'hello', 'dm');
    expect(await promptOf(ALICE.id, 'dm')).toContain('vault 7');

    // A group chat's prompt is everyone's: a person's notes stay out of it even when they start it.
    await say(ALICE, '/new', 'group');
    await say(ALICE, 'hello group', 'group');
    expect(await promptOf(GROUP, 'group')).not.toMatch(/vault 7|standup/);

    // The API: the profile-wide notes are empty; each person's own are theirs.
    expect((await stack.get('/v1/profiles/main/memory')).body.entries).toEqual([]);
    const alice = await stack.get(`/v1/profiles/main/memory?user_id=telegram:${ALICE.id}`);
    expect(alice.body.entries.map((e: { content: string }) => e.content)).toEqual(['the deploy key is in vault 7']);
  });

  it('shares notes profile-wide only where the operator says so (memory_shared)', async () => {
    const patched = await stack.patch('/v1/profiles/main', { memory_shared: true });
    expect(patched.status).toBe(200);
    expect(patched.body.memory_shared).toBe(true);
    await say(ALICE, 'note the office closes at six', 'group');
    const shared = await stack.get('/v1/profiles/main/memory');
    expect(shared.body.entries.map((e: { content: string }) => e.content)).toEqual(['the office closes at six']);
    await say(BOB, '/new', 'dm');
    await say(BOB, 'hello again', 'dm');
    expect(await promptOf(BOB.id, 'dm')).toContain('the office closes at six');
    // A person's own notes stay listed as theirs (and deletable) while sharing keeps them out of prompts.
    const own = await stack.get(`/v1/profiles/main/memory?user_id=telegram:${ALICE.id}`);
    expect(own.body.entries.map((e: { content: string }) => e.content)).toEqual(['the deploy key is in vault 7']);
    await stack.patch('/v1/profiles/main', { memory_shared: false });
  });
});
