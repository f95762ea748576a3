import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { personWithToken } from '../support/people.ts';
import type { TestPerson } from '../support/people.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 32, point 5: a person links their Telegram account with a one-time code; after that their
 * memory and history search are one, through the API and in the chat, what they wrote before the
 * link included. A code works once and for 10 minutes.
 */
const SECRET = 'people-link_1';
const TG = { id: 4300, username: 'ana_tg' };
const STRANGER = { id: 4301, username: 'mallory' };

function noter(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `saved: ${last.content.slice(0, 200)}` };
  const text = request.lastUserText;
  if (text.startsWith('note ')) return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'memory', content: text.slice(5) } }] };
  return { text: `echo: ${text}` };
}

describe('one person across platforms: /link CODE', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  let ana: TestPerson;

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.url}${path}`, {
      method,
      headers: { ...ana.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const say = async (from: { id: number; username: string }, text: string) => {
    const before = telegram.botMessages(from.id).length;
    const update = telegram.userMessage({ chatId: from.id, chatType: 'private', from, text });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => telegram.botMessages(from.id)[before]?.text, { what: `the answer to ${text}` });
  };

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: noter });
    telegram = await startFakeTelegram();
    stack = await startStack({ model: llm, env: openChatsEnv(SECRET, telegram) });
    ana = await personWithToken(stack.database.db, 'Ana', [{ role: 'member', profiles: [] }], ['api:ana']);
  });
  afterAll(async () => {
    await stack?.stop();
    await telegram?.close();
    await llm?.close();
  });

  it('links the Telegram account, after which memory and search are one, before and after the link', async () => {
    expect(await say(TG, 'note I drink green tea')).toContain('green tea');
    expect(await say(TG, 'the kiwi harvest is in May')).toContain('kiwi');
    // Before the link the API person does not see the Telegram account's things.
    expect((await api('GET', '/v1/search?q=kiwi')).body.sessions).toEqual([]);

    const code = await api('POST', `/v1/people/${ana.person.id}/link-code`);
    expect(code.status).toBe(201);
    expect(code.body.code).toMatch(/^[A-Z2-9]{8}$/);
    expect(new Date(code.body.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    expect(await say(TG, `/link ${code.body.code}`)).toMatch(/^Linked: you are Ana here too/);
    // The code never became a message or reached the model.
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM inbound_events WHERE text LIKE ${`%${code.body.code}%`}`.execute(stack.database.db);
    expect(Number(rows[0]?.n)).toBe(0);

    const person = await api('GET', `/v1/people/${ana.person.id}`);
    expect(person.body.identities).toEqual(['api:ana', `telegram:${TG.id}`]);
    const memory = await api('GET', '/v1/profiles/main/memory?user_id=ana');
    expect(JSON.stringify(memory.body)).toContain('green tea');
    const search = await api('GET', '/v1/search?q=kiwi');
    expect(search.body.sessions).toHaveLength(1);
    const sessions = await api('GET', '/v1/sessions');
    expect(sessions.body.sessions.map((s: { platform: string }) => s.platform)).toContain('telegram');

    // After the link, what the Telegram account writes is the person's at once.
    expect(await say(TG, 'note oolong too')).toContain('oolong');
    const owners = await stack.database.db.selectFrom('memory_entries').select(['user_id', 'content']).orderBy('id').execute();
    expect(owners).toEqual([
      { user_id: 'api:ana', content: 'I drink green tea' },
      { user_id: 'api:ana', content: 'oolong too' },
    ]);
    // And an API message and a Telegram message count for one person's limits.
    const usage = await stack.database.db.selectFrom('inbound_events').select('user_id').distinct().execute();
    expect(usage.map((row) => row.user_id)).toEqual(['api:ana']);

    // A code works once: someone else sending it links nothing.
    expect(await say(STRANGER, `/link ${code.body.code}`)).toMatch(/not valid/);
    expect((await api('GET', `/v1/people/${ana.person.id}`)).body.identities).not.toContain(`telegram:${STRANGER.id}`);
  });

  it('refuses an expired code and an empty one', async () => {
    const code = await api('POST', `/v1/people/${ana.person.id}/link-code`);
    await stack.database.db
      .updateTable('link_codes')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('used_at', 'is', null)
      .execute();
    expect(await say(STRANGER, `/link ${code.body.code}`)).toMatch(/not valid/);
    expect(await say(STRANGER, '/link')).toMatch(/^Send \/link followed by the code/);
    const linked = await stack.database.db.selectFrom('person_identities').select('identity').where('identity', '=', `telegram:${STRANGER.id}`).execute();
    expect(linked).toEqual([]);
  });
});
