import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDOFF_NOT_YOURS_REPLY } from '@herald/handoff';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { writeHooks } from './support/hook-fixtures.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// /handoff (docs/long-chats.md#handoff): a session started over the API moves to the Telegram home
// chat, set with /sethome there; a handoff asked before there is a home chat fails with the reason
// and changes nothing, and asking again after /sethome goes through. on_session_end fires once for
// the home chat's own session, with the reason 'handoff'. No HERALD_OPERATORS here: anyone may
// /sethome, and a group's conversation still moves only at the word of the person who started it.

const SECRET = 'handoff-webhook-secret';
const ALICE = { id: 42, username: 'alice' };
const BOB = { id: 43, username: 'bob' };
const HOME = 4242;
const GROUP = -100_4242;

function endHook(log: string): Record<string, string> {
  return {
    'ends.mjs': `
      import { appendFileSync } from 'node:fs';
      export default function register(ctx) {
        ctx.on('on_session_end', (event) => { appendFileSync(${JSON.stringify(log)}, JSON.stringify(event) + '\\n'); });
      }`,
  };
}

describe('/handoff from the API to the Telegram home chat', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  const log = join(mkdtempSync(join(tmpdir(), 'herald-ends-')), 'ends.jsonl');
  const ends = (): any[] =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [];

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    const hooks = writeHooks(endHook(log), 'hooks:\n  - { name: ends, event: on_session_end, module: ./ends.mjs }\n');
    stack = await startStack({
      model: llm,
      env: {
        ...telegram.env,
        HERALD_DELIVERY_POLL_MS: '100',
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: SECRET,
        TELEGRAM_ALLOWED_USERS: `${ALICE.id},${BOB.id}`,
        HERALD_HOOKS_FILE: hooks,
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const fromTelegram = async (text: string, count: number) => {
    const update = telegram.userMessage({ chatId: HOME, from: ALICE, text });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => (telegram.botMessages(HOME).length >= count ? telegram.botMessages(HOME).map((m) => m.text) : undefined), {
      what: `${count} bot messages in the home chat`,
    });
  };
  const settled = (sessionId: string) =>
    waitFor(
      async () => {
        const state = await stack.get(`/v1/sessions/${sessionId}/handoff`);
        return state.body.status === 'done' || state.body.status === 'failed' ? state.body : undefined;
      },
      { what: 'the handoff to finish' },
    );

  it('fails without a home chat and changes nothing, then after /sethome moves the session and the chat carries on in it', async () => {
    llm.handler = (request) => ({
      text: request.lastUserText.includes('codename') && request.messages.some((m) => String(m.content).includes('Falcon')) ? 'It is Falcon.' : `noted: ${request.lastUserText}`,
    });
    const first = await stack.post('/v1/messages?wait=30', { chat_id: 'desk', user_id: 'alice', text: 'Remember: the codename is Falcon.' });
    expect(first.status).toBe(200);
    const sessionId: string = first.body.session_id;

    // No home chat yet: the request fails with the reason; the route and the session stay as they were.
    const asked = await stack.post(`/v1/sessions/${sessionId}/handoff`, { platform: 'telegram' });
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ session_id: sessionId, platform: 'telegram', status: 'pending' });
    const failed = await settled(sessionId);
    expect(failed).toMatchObject({ id: asked.body.id, status: 'failed', reason: expect.stringMatching(/no home chat is set for telegram/) });
    const untouched = await stack.database.db.selectFrom('sessions').select(['platform', 'chat_id', 'ended_at']).where('id', '=', sessionId).executeTakeFirstOrThrow();
    expect(untouched).toEqual({ platform: 'api', chat_id: 'desk', ended_at: null });
    const again = await stack.post('/v1/messages?wait=30', { chat_id: 'desk', user_id: 'alice', text: 'still here?' });
    expect(again.body.session_id).toBe(sessionId);

    // /sethome in the Telegram chat (which starts that chat's own session), then ask again.
    expect((await fromTelegram('/sethome', 1)).at(-1)).toMatch(/now the telegram home chat/);
    const homeSession = await stack.database.db.selectFrom('sessions').select('id').where('chat_id', '=', String(HOME)).executeTakeFirstOrThrow();
    const retried = await stack.post(`/v1/sessions/${sessionId}/handoff`, { platform: 'telegram' });
    expect(retried.status).toBe(202);
    expect(retried.body.id).not.toBe(asked.body.id);
    expect(await settled(sessionId)).toMatchObject({ id: retried.body.id, status: 'done', target_chat_id: String(HOME), reason: null });

    // One short message in the home chat says where the work stands.
    const posted = await waitFor(async () => (telegram.botMessages(HOME).length >= 2 ? telegram.botMessages(HOME).map((m) => m.text) : undefined), { what: 'the handoff message' });
    expect(posted).toHaveLength(2);
    expect(posted[1]).toMatch(/^Handed off from api/);
    expect(posted[1]).toContain('Last asked: "still here?"');

    // The next message from the home chat continues the same session, with its history.
    const texts = await fromTelegram('what is the codename?', 3);
    expect(texts.at(-1)).toBe('It is Falcon.');
    const last = llm.requests.at(-1)!;
    expect(last.sessionKey).toBe(sessionId);
    const moved = await stack.database.db.selectFrom('sessions').select(['platform', 'chat_id', 'end_reason']).where('id', '=', sessionId).executeTakeFirstOrThrow();
    expect(moved).toEqual({ platform: 'telegram', chat_id: String(HOME), end_reason: null });

    // The home chat's own session gave way, and on_session_end fired once for it, with the reason.
    const gaveWay = await stack.database.db.selectFrom('sessions').select('end_reason').where('id', '=', homeSession.id).executeTakeFirstOrThrow();
    expect(gaveWay.end_reason).toBe('handoff');
    const fired = await waitFor(async () => (ends().length >= 1 ? ends() : undefined), { what: 'on_session_end' });
    expect(fired).toEqual([expect.objectContaining({ event: 'on_session_end', session_id: homeSession.id, reason: 'handoff', platform: 'telegram' })]);

    // The API chat the session came from starts afresh.
    const fresh = await stack.post('/v1/messages?wait=30', { chat_id: 'desk', user_id: 'alice', text: 'hello again' });
    expect(fresh.body.session_id).not.toBe(sessionId);
  });

  it('answers the API edges: 400 for a platform it cannot hand off to, 404 for an unknown session, 409 for an ended one', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await stack.post(`/v1/sessions/${unknown}/handoff`, { platform: 'telegram' })).status).toBe(404);
    expect((await stack.get(`/v1/sessions/${unknown}/handoff`)).status).toBe(404);
    expect((await stack.post('/v1/sessions/not-a-uuid/handoff', { platform: 'telegram' })).status).toBe(400);
    const session = await stack.post('/v1/messages?wait=30', { chat_id: 'edges', user_id: 'bob', text: 'hi' });
    const bad = await stack.post(`/v1/sessions/${session.body.session_id}/handoff`, { platform: 'api' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('platform');
    expect((await stack.post(`/v1/sessions/${session.body.session_id}/handoff`, { platform: 'tele\u0000gram' })).status).toBe(400);
    await stack.post('/v1/messages?wait=30', { chat_id: 'edges', user_id: 'bob', text: '/new' });
    const ended = await stack.post(`/v1/sessions/${session.body.session_id}/handoff`, { platform: 'telegram' });
    expect(ended.status).toBe(409);
    expect(ended.body.error.code).toBe('session_ended');
    const fired = await waitFor(async () => (ends().some((end) => end.session_id === session.body.session_id) ? ends() : undefined), { what: 'on_session_end for /new' });
    expect(fired.filter((end) => end.session_id === session.body.session_id)).toEqual([expect.objectContaining({ reason: 'new' })]);
  });

  it('with no operators configured, any member may /sethome, and a group conversation is handed off only by whoever started it', async () => {
    llm.handler = (request) => ({ text: `noted: ${request.lastUserText}` });
    const ask = async (chatId: number, from: { id: number; username: string }, text: string) => {
      const group = chatId < 0;
      const mention = group && !text.startsWith('/');
      const seen = telegram.botMessages(chatId).length;
      const update = telegram.userMessage({ chatId, chatType: group ? 'group' : 'private', from, text: mention ? `@${telegram.bot.username} ${text}` : text, mentionBot: mention });
      expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
      return waitFor(async () => telegram.botMessages(chatId)[seen]?.text, { what: `the answer to ${text}` });
    };
    expect(await ask(GROUP, ALICE, 'the budget is due friday')).toBe('noted: the budget is due friday');
    const session = await stack.database.db.selectFrom('sessions').select('id').where('chat_id', '=', String(GROUP)).executeTakeFirstOrThrow();
    const handoffs = () => stack.database.db.selectFrom('session_handoffs').select(['status', 'requested_by', 'target_chat_id']).where('session_id', '=', session.id).execute();

    // Bob is no operator (there are none), yet his /sethome is taken, as before operators existed.
    expect(await ask(BOB.id, BOB, '/sethome')).toMatch(/now the telegram home chat/);
    const home = await stack.database.db.selectFrom('home_chats').select(['chat_id', 'set_by']).where('platform', '=', 'telegram').executeTakeFirstOrThrow();
    expect(home).toEqual({ chat_id: String(BOB.id), set_by: `telegram:${BOB.id}` });

    expect(await ask(GROUP, BOB, '/handoff telegram')).toBe(HANDOFF_NOT_YOURS_REPLY);
    expect(await handoffs()).toEqual([]);
    expect(await ask(GROUP, ALICE, '/handoff telegram')).toMatch(/^Handing this conversation off/);
    const done = await waitFor(
      async () => {
        const rows = await handoffs();
        return rows[0]?.status === 'done' ? rows : undefined;
      },
      { what: 'the handoff to finish' },
    );
    expect(done).toEqual([{ status: 'done', requested_by: `telegram:${ALICE.id}`, target_chat_id: String(BOB.id) }]);
  });
});
