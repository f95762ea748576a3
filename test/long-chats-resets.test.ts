import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { writeHooks } from './support/hook-fixtures.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Reset policies (docs/long-chats.md#resets) against the real services: an idle rule from
// HERALD_SESSION_RESET for Telegram private chats, and a daily rule a profile sets for group chats.
// The clock is not moved: the session's last activity is moved back, as time passing would.

const SECRET = 'reset-webhook-secret';
const ALICE = { id: 42, username: 'alice' };
const DM = 42;
const GROUP = -100;

describe('reset policies', () => {
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
    const hooks = writeHooks(
      {
        'ends.mjs': `import { appendFileSync } from 'node:fs';
        export default function register(ctx) { ctx.on('on_session_end', (event) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(event) + '\\n')); }`,
      },
      'hooks:\n  - { name: ends, event: on_session_end, module: ./ends.mjs }\n',
    );
    llm = await startFakeOpenAI();
    llm.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: {
        ...telegram.env,
        HERALD_DELIVERY_POLL_MS: '100',
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: SECRET,
        TELEGRAM_ALLOWED_USERS: String(ALICE.id),
        HERALD_HOOKS_FILE: hooks,
        HERALD_SESSION_RESET: JSON.stringify([{ platform: 'telegram', chat_type: 'dm', mode: 'idle', idle_minutes: 30 }]),
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const say = async (chatId: number, text: string, count: number) => {
    // In a group the bot answers when mentioned.
    const group = chatId < 0;
    const update = telegram.userMessage({ chatId, chatType: group ? 'group' : 'private', from: ALICE, text: group ? `@herald_test_bot ${text}` : text, mentionBot: group });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => (telegram.botMessages(chatId).length >= count ? telegram.botMessages(chatId).map((m) => m.text) : undefined), {
      what: `${count} bot messages in chat ${chatId}`,
    });
  };
  const sessionsOf = (chatId: number) => stack.database.db.selectFrom('sessions').select(['id', 'end_reason']).where('chat_id', '=', String(chatId)).orderBy('created_at').execute();
  /** Time passes for a session: its messages and its start move `minutes` into the past. */
  const age = async (sessionId: string, minutes: number) => {
    await sql`UPDATE messages SET created_at = created_at - make_interval(mins => ${minutes}) WHERE session_id = ${sessionId}::uuid`.execute(stack.database.db);
    await sql`UPDATE sessions SET created_at = created_at - make_interval(mins => ${minutes}) WHERE id = ${sessionId}::uuid`.execute(stack.database.db);
  };

  it('ends a session idle past the limit: the next message starts a fresh one, and the person is told once', async () => {
    await say(DM, 'first', 1);
    await say(DM, 'second, within the limit', 2);
    expect(await sessionsOf(DM)).toHaveLength(1);
    const [old] = await sessionsOf(DM);
    await age(old!.id, 31);
    const texts = await say(DM, 'back after a break', 4);
    expect(texts[2]).toMatch(/^The previous conversation here ended after 30 minutes without a message; this one starts fresh/);
    expect(texts[3]).toBe('echo: back after a break');
    const sessions = await sessionsOf(DM);
    expect(sessions).toEqual([
      { id: old!.id, end_reason: 'reset' },
      { id: expect.any(String), end_reason: null },
    ]);
    expect(llm.requests.at(-1)!.sessionKey).toBe(sessions[1]!.id);
    // Told once: the next messages in the fresh session get their answers and no further notice.
    const after = await say(DM, 'and again', 5);
    expect(after.filter((text) => text.startsWith('The previous conversation'))).toHaveLength(1);
    expect(await sessionsOf(DM)).toHaveLength(2);
    // on_session_end fired once for the reset session, with the reason.
    const fired = await waitFor(async () => (ends().length >= 1 ? ends() : undefined), { what: 'on_session_end' });
    expect(fired).toEqual([expect.objectContaining({ session_id: old!.id, reason: 'reset', chat_type: 'dm' })]);
  });

  it("ends a group session at a profile's daily reset hour, not before", async () => {
    // The reset hour is half a day from now, so "a few minutes later" never crosses it.
    const hour = (new Date().getUTCHours() + 12) % 24;
    const rule = { platform: 'telegram', chat_type: 'group', mode: 'daily', at_hour: hour, timezone: 'UTC' };
    const patched = await stack.patch('/v1/profiles/main', { session_reset: [rule] });
    expect(patched.status).toBe(200);
    expect(patched.body.session_reset).toEqual([{ ...rule, idle_minutes: 1440 }]);
    expect((await stack.patch('/v1/profiles/main', { session_reset: [{ mode: 'daily', timezone: 'Mars/Olympus' }] })).status).toBe(400);
    await say(GROUP, 'morning', 1);
    const [old] = await sessionsOf(GROUP);
    // A few minutes later is the same day: no reset.
    await age(old!.id, 5);
    await say(GROUP, 'still today', 2);
    expect(await sessionsOf(GROUP)).toHaveLength(1);
    // A day later, a reset hour has passed since.
    await age(old!.id, 24 * 60 + 5);
    const texts = await say(GROUP, 'next day', 4);
    expect(texts[2]).toContain(`ended at the daily reset (${String(hour).padStart(2, '0')}:00 UTC)`);
    expect((await sessionsOf(GROUP)).map((s) => s.end_reason)).toEqual(['reset', null]);
    // The DM rule is the config's: this profile rule for groups did not change it.
    expect((await sessionsOf(DM)).map((s) => s.end_reason)).toEqual(['reset', null]);
  });
});
