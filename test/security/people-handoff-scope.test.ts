import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinRegistry, ToolGate } from '@herald/tools';
import type { ToolContext } from '@herald/tools';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * A handoff moves a person's own conversation and nothing else (issue 39, point 2;
 * docs/decisions/2026-12-05-message-scope.md). Alice hands her DM off to the operator's home chat,
 * and Bob sends /new then /handoff in a group Alice's conversation started in: in both, what the
 * operator writes in the home chat afterwards is the operator's, never found by the person who
 * handed off (history search, session_search's discover, read and browse), and the operator's own
 * home-chat session is set aside, not ended.
 */

const SECRET = 'people-handoff-scope_1';
const ALICE = { id: 52, username: 'alice' };
const BOB = { id: 53, username: 'bob' };
const OPERATOR = { id: 9, username: 'ops' };
const GROUP = -100_530;
const ids = { alice: `telegram:${ALICE.id}`, bob: `telegram:${BOB.id}`, operator: `telegram:${OPERATOR.id}` };

describe('/handoff into the operator home chat leaks nothing of it', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `echo: ${request.lastUserText}` }) });
    telegram = await startFakeTelegram();
    stack = await startStack({ model: llm, env: { ...openChatsEnv(SECRET, telegram), HERALD_OPERATORS: ids.operator } });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const ask = async (chatId: number, from: { id: number; username: string }, text: string) => {
    const group = chatId < 0;
    const mention = group && !text.startsWith('/');
    const seen = telegram.botMessages(chatId).length;
    const update = telegram.userMessage({ chatId, chatType: group ? 'group' : 'private', from, text: mention ? `@${telegram.bot.username} ${text}` : text, mentionBot: mention });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => telegram.botMessages(chatId)[seen]?.text, { what: `the answer to ${text}` });
  };
  const routed = async (chatId: number) => {
    const row = await stack.database.db
      .selectFrom('session_routes')
      .innerJoin('sessions', 'sessions.id', 'session_routes.session_id')
      .select(['sessions.id', 'sessions.origin_user_id', 'sessions.ended_at', 'sessions.end_reason'])
      .where('session_routes.session_key', 'like', `%:${chatId}`)
      .executeTakeFirstOrThrow();
    return row;
  };
  const handedOff = (sessionId: string) =>
    waitFor(
      async () => {
        const row = await stack.database.db.selectFrom('session_handoffs').select(['status', 'reason']).where('session_id', '=', sessionId).executeTakeFirst();
        return row?.status === 'done' || row?.status === 'failed' ? row : undefined;
      },
      { what: 'the handoff to finish' },
    );
  const apiSearch = async (userId: string, q: string) => {
    const response = await stack.get(`/v1/search?user_id=${encodeURIComponent(userId)}&q=${encodeURIComponent(q)}`);
    expect(response.status).toBe(200);
    return (response.body.sessions as { session_id: string; hits: { snippet: string }[] }[]).flatMap((session) => session.hits.map((hit) => hit.snippet));
  };
  const runTool = async (userId: string, args: Record<string, unknown>) => {
    const context: ToolContext = {
      sessionId: '00000000-0000-4000-8000-000000000000',
      turnId: '00000000-0000-4000-8000-000000000001',
      profileId: 'main',
      userId,
      platform: 'telegram',
      role: 'chat',
      workspaceDir: '/nonexistent',
      db: stack.database.db,
      signal: new AbortController().signal,
      fencedWrite: () => Promise.reject(new Error('session_search must not write')),
    };
    const gate = new ToolGate({ registry: builtinRegistry(), offered: ['session_search'], permitted: ['session_search'], approvalTimeoutMs: 1000 });
    const outcome = await gate.execute({ id: 'call-1', name: 'session_search', arguments: JSON.stringify(args) }, context);
    expect(outcome.isError).toBe(false);
    return JSON.parse(outcome.content);
  };

  /** Everything a person can read of a session through session_search: its start and end, and the browse list. */
  const toolSees = async (userId: string, sessionId: string) => {
    const read = await runTool(userId, { session_id: sessionId });
    const browse = await runTool(userId, {});
    return JSON.stringify([read, browse]);
  };

  beforeAll(async () => {
    expect(await ask(OPERATOR.id, OPERATOR, '/sethome')).toMatch(/now the telegram home chat/);
    expect(await ask(OPERATOR.id, OPERATOR, 'operator notes before anyone arrives')).toBe('echo: operator notes before anyone arrives');
  });

  it("a DM /handoff telegram: the operator session is not ended and nothing the operator writes after is the handed-off person's", async () => {
    const home = await routed(OPERATOR.id);
    expect(home.origin_user_id).toBe(ids.operator);
    expect(await ask(ALICE.id, ALICE, 'alice asks about the quarterly figures')).toBe('echo: alice asks about the quarterly figures');
    const alice = await routed(ALICE.id);
    expect(await ask(ALICE.id, ALICE, '/handoff telegram')).toMatch(/^Handing this conversation off/);
    expect(await handedOff(alice.id)).toEqual({ status: 'done', reason: null });

    // The operator's own home-chat session was set aside, not ended by Alice.
    const aside = await stack.database.db.selectFrom('sessions').select(['ended_at', 'end_reason']).where('id', '=', home.id).executeTakeFirstOrThrow();
    expect(aside).toEqual({ ended_at: null, end_reason: null });

    await waitFor(async () => telegram.botMessages(OPERATOR.id).find((message) => message.text.startsWith('Handed off from telegram')), { what: 'the handoff message' });
    // The operator writes in the home chat: it is Alice's session now, but the words are the operator's.
    expect((await routed(OPERATOR.id)).id).toBe(alice.id);
    expect(await ask(OPERATOR.id, OPERATOR, 'the root password for dbprod is zebracorn')).toBe('echo: the root password for dbprod is zebracorn');
    expect(await apiSearch(ids.alice, 'zebracorn')).toEqual([]);
    expect((await runTool(ids.alice, { query: 'zebracorn' })).results).toEqual([]);
    expect(await toolSees(ids.alice, alice.id)).not.toContain('zebracorn');
    // What Alice wrote herself is still hers, and the operator finds what they wrote.
    expect((await apiSearch(ids.alice, 'quarterly')).length).toBeGreaterThan(0);
    expect((await apiSearch(ids.operator, 'zebracorn')).length).toBeGreaterThan(0);
    expect(await toolSees(ids.operator, alice.id)).toContain('zebracorn');
  });

  it('/new then /handoff in a group: the same rule, for the person who sent /new and for the other members', async () => {
    expect(await ask(GROUP, ALICE, 'group plans for the offsite')).toBe('echo: group plans for the offsite');
    const started = await routed(GROUP);
    expect(started.origin_user_id).toBe(ids.alice);
    expect(await ask(GROUP, BOB, '/new')).toMatch(/Started a new session/);
    expect(await ask(GROUP, BOB, 'bob starts a fresh thread')).toBe('echo: bob starts a fresh thread');
    expect(await ask(GROUP, ALICE, 'alice chimes in on the fresh thread')).toBe('echo: alice chimes in on the fresh thread');
    const bobs = await routed(GROUP);
    expect(bobs.origin_user_id).toBe(ids.bob);
    const homeBefore = await routed(OPERATOR.id);
    const notices = telegram.botMessages(OPERATOR.id).filter((message) => message.text.startsWith('Handed off from telegram')).length;
    expect(await ask(GROUP, BOB, '/handoff telegram')).toMatch(/^Handing this conversation off/);
    expect(await handedOff(bobs.id)).toEqual({ status: 'done', reason: null });
    // Bob ended nothing of the operator's: the session the home chat held is set aside, live.
    const aside = await stack.database.db.selectFrom('sessions').select(['ended_at']).where('id', '=', homeBefore.id).executeTakeFirstOrThrow();
    expect(aside.ended_at).toBeNull();
    await waitFor(async () => telegram.botMessages(OPERATOR.id).filter((message) => message.text.startsWith('Handed off from telegram')).length > notices || undefined, {
      what: 'the second handoff message',
    });

    expect(await ask(OPERATOR.id, OPERATOR, 'the vault unseal key is platypusgrove')).toBe('echo: the vault unseal key is platypusgrove');
    for (const member of [ids.bob, ids.alice]) {
      expect(await apiSearch(member, 'platypusgrove')).toEqual([]);
      expect((await runTool(member, { query: 'platypusgrove' })).results).toEqual([]);
      expect(await toolSees(member, bobs.id)).not.toContain('platypusgrove');
    }
    // The group's own messages stay visible to its members, whoever wrote them.
    expect((await apiSearch(ids.alice, 'fresh thread')).length).toBeGreaterThan(0);
    expect((await apiSearch(ids.bob, 'chimes')).length).toBeGreaterThan(0);
    expect((await apiSearch(ids.operator, 'platypusgrove')).length).toBeGreaterThan(0);
  });
});
