import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiUserId, parseUserId, qualifyUserId } from '@herald/core';
import { createDb, ensureDatabase, MIGRATIONS_DIR, migrate } from '@herald/db';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { startFakeDiscord } from '../support/fake-discord.ts';
import type { FakeDiscord } from '../support/fake-discord.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';
import { createTestDatabase } from '../support/test-database.ts';
import type { TestDatabase } from '../support/test-database.ts';

/**
 * Issue 17, point 11: people are named by platform and id. Telegram's person 42 and Discord's
 * person 42 are two people: they share neither memory nor search scope. The HTTP API's own ids keep
 * their meaning (`u1` is `api:u1` in a message, a search and a memory view), and routes that take a
 * user id accept the qualified form. Migration 0022 rewrites the rows written before.
 */

const SECRET = 'people-ids_1';
const SAME_ID = 42;

/** "remember X" saves X in the person's user profile; anything else is echoed. */
function rememberer(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `saved: ${last.content.slice(0, 300)}` };
  const text = request.lastUserText;
  if (text.startsWith('remember ')) return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'user', content: text.slice(9) } }] };
  return { text: `echo: ${text}` };
}

describe('one function qualifies user ids', () => {
  it('qualifies, parses and reads API ids the same way everywhere', () => {
    expect(qualifyUserId('telegram', '42')).toBe('telegram:42');
    expect(parseUserId('discord:42')).toEqual({ platform: 'discord', id: '42' });
    // The bare id keeps everything after the first colon: an API id may contain colons.
    expect(parseUserId('api:team:alice')).toEqual({ platform: 'api', id: 'team:alice' });
    for (const bad of ['42', 'telegram:', ':42', 'matrix:42', 'Telegram:42', 'telegram\u200b:42', '']) expect(parseUserId(bad), bad).toBeUndefined();
    expect(apiUserId('u1')).toBe('api:u1');
    expect(apiUserId('api:u1')).toBe('api:u1');
    expect(apiUserId('telegram:42')).toBe('telegram:42');
    // A look-alike platform name is not a platform: it is an API id, never Telegram's person.
    expect(apiUserId('tеlegram:42')).toBe('api:tеlegram:42');
    expect(() => qualifyUserId('telegram', '')).toThrow();
  });
});

describe('Telegram 42 and Discord 42 are two people', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let discord: FakeDiscord;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: rememberer });
    telegram = await startFakeTelegram();
    discord = await startFakeDiscord();
    stack = await startStack({
      model: llm,
      env: openChatsEnv(SECRET, telegram, discord),
    });
    await discord.ready();
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
    await discord.close();
  });

  const fromTelegram = async (text: string) => {
    const before = telegram.botMessages(SAME_ID).length;
    const update = telegram.userMessage({ chatId: SAME_ID, from: { id: SAME_ID, username: 'tg42' }, text });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => telegram.botMessages(SAME_ID)[before]?.text, { what: `the answer to ${text}` });
  };
  const DM = '600000000000000042';
  const fromDiscord = async (text: string) => {
    const before = discord.botMessages(DM).length;
    discord.userMessage({ channelId: DM, userId: String(SAME_ID), content: text, dm: true });
    return waitFor(async () => discord.botMessages(DM)[before]?.content, { what: `the answer to ${text}` });
  };
  const promptOf = async (sessionKey: string) => {
    const row = await stack.database.db
      .selectFrom('session_routes')
      .innerJoin('sessions', 'sessions.id', 'session_routes.session_id')
      .select(['sessions.system_prompt'])
      .where('session_routes.session_key', '=', sessionKey)
      .executeTakeFirstOrThrow();
    return row.system_prompt ?? '';
  };

  it("keeps their user profiles apart, in the store, the API view and the next session's prompt", async () => {
    expect(await fromTelegram('remember drinks tea, lives in Oslo')).toContain('saved:');
    expect(await fromDiscord('remember drinks coffee, lives in Lima')).toContain('saved:');

    const entries = await stack.database.db.selectFrom('memory_entries').select(['user_id', 'content']).where('store', '=', 'user').orderBy('id').execute();
    expect(entries).toEqual([
      { user_id: 'telegram:42', content: 'drinks tea, lives in Oslo' },
      { user_id: 'discord:42', content: 'drinks coffee, lives in Lima' },
    ]);
    const tgView = await stack.get('/v1/profiles/main/users/telegram:42/memory');
    expect(tgView.body.entries.map((e: { content: string }) => e.content)).toEqual(['drinks tea, lives in Oslo']);
    const dcView = await stack.get('/v1/profiles/main/users/discord%3A42/memory');
    expect(dcView.body.entries.map((e: { content: string }) => e.content)).toEqual(['drinks coffee, lives in Lima']);
    // The bare id is the API's person 42, who has told Herald nothing.
    expect((await stack.get('/v1/profiles/main/users/42/memory')).body.entries).toEqual([]);

    await fromTelegram('/new');
    await fromTelegram('hello again');
    await fromDiscord('/new');
    await fromDiscord('hello again');
    const tgPrompt = await promptOf(`agent:main:telegram:dm:${SAME_ID}`);
    const dcPrompt = await promptOf(`agent:main:discord:dm:${DM}`);
    expect(tgPrompt).toContain('drinks tea');
    expect(tgPrompt).not.toContain('drinks coffee');
    expect(dcPrompt).toContain('drinks coffee');
    expect(dcPrompt).not.toContain('drinks tea');
  });

  it("keeps their search scopes apart; the API's bare ids and qualified ids name the same person", async () => {
    await fromTelegram('the zebra password is on the blue card');
    const search = (user: string) => stack.get(`/v1/search?${new URLSearchParams({ q: 'zebra', user_id: user })}`);
    expect((await search('telegram:42')).body.sessions.length).toBe(1);
    expect((await search('discord:42')).body.sessions).toEqual([]);
    expect((await search('42')).body.sessions).toEqual([]);

    const sent = await stack.post('/v1/messages?wait=20', { chat_id: 'ids-api', user_id: 'u1', text: 'the walrus plan' });
    expect(sent.status).toBe(200);
    const stored = await stack.database.db.selectFrom('inbound_events').select('user_id').where('id', '=', sent.body.event_id).executeTakeFirstOrThrow();
    expect(stored.user_id).toBe('api:u1');
    const walrus = (user: string) => stack.get(`/v1/search?${new URLSearchParams({ q: 'walrus', user_id: user })}`);
    expect((await walrus('u1')).body.sessions.length).toBe(1);
    expect((await walrus('api:u1')).body.sessions.length).toBe(1);
    expect((await walrus('telegram:u1')).body.sessions).toEqual([]);
    // A message sent with the qualified form lands in the same person's scope.
    await stack.post('/v1/messages?wait=20', { chat_id: 'ids-api-2', user_id: 'api:u1', text: 'the second walrus' });
    expect((await walrus('u1')).body.sessions.length).toBe(2);
  });
});

describe('migration 0022 qualifies the ids of rows written before it', () => {
  let database: TestDatabase;
  let before: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    // A second database brought only up to the files before 0022, then given the old rows.
    before = database.url.replace(/\/([^/]+)$/, '/$1_pre');
    const dir = mkdtempSync(join(tmpdir(), 'herald-pre-0022-'));
    for (const file of readdirSync(MIGRATIONS_DIR)) {
      if (/^\d{4}_/.test(file) && file >= '0022') continue;
      cpSync(join(MIGRATIONS_DIR, file), join(dir, file), { recursive: true });
    }
    await ensureDatabase(before);
    await migrate(before, { dir });
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await sql`DROP DATABASE IF EXISTS ${sql.id(new URL(before).pathname.slice(1))} WITH (FORCE)`.execute(database.db);
    await database.drop();
  });

  it('rewrites sessions, events, memory, waits, approvals, refusals, cron owners and tool-policy entries', async () => {
    const db = createDb({ url: before, maxConnections: 1 });
    try {
      await sql.raw(LEGACY_ROWS).execute(db);
      await migrate(before);
      const one = async (query: string) => (await sql.raw<Record<string, unknown>>(query).execute(db)).rows;
      expect(await one(`SELECT platform, origin_user_id FROM sessions ORDER BY platform`)).toEqual([
        { platform: 'api', origin_user_id: 'api:u1' },
        { platform: 'cron', origin_user_id: 'telegram:42' },
        { platform: 'discord', origin_user_id: 'discord:42' },
        { platform: 'telegram', origin_user_id: 'telegram:42' },
      ]);
      expect(await one(`SELECT platform, user_id FROM inbound_events ORDER BY platform`)).toEqual([
        { platform: 'api', user_id: 'api:u1' },
        { platform: 'cron', user_id: 'telegram:42' },
        { platform: 'discord', user_id: 'discord:42' },
        { platform: 'telegram', user_id: 'telegram:42' },
      ]);
      // 42's profile was seen by both people until now: each keeps it; u1's is the API's; the
      // profile-wide notes stay profile-wide.
      expect(await one(`SELECT store, user_id, content FROM memory_entries ORDER BY user_id, content`)).toEqual([
        { store: 'memory', user_id: '', content: 'the build runs on Fridays' },
        { store: 'user', user_id: 'api:u1', content: 'u1 likes lists' },
        { store: 'user', user_id: 'discord:42', content: '42 likes tea' },
        { store: 'user', user_id: 'telegram:42', content: '42 likes tea' },
      ]);
      expect(await one(`SELECT status, answered_by FROM tool_waits ORDER BY status`)).toEqual([
        { status: 'approved', answered_by: 'telegram:42' },
        { status: 'expired', answered_by: 'timeout' },
      ]);
      expect(await one(`SELECT approved_by FROM session_approvals`)).toEqual([{ approved_by: 'telegram:42' }]);
      expect(await one(`SELECT user_id FROM tool_refusals`)).toEqual([{ user_id: 'discord:42' }]);
      expect(await one(`SELECT name, creator_user_id FROM cron_jobs ORDER BY name`)).toEqual([
        { name: 'from telegram', creator_user_id: 'telegram:42' },
        { name: 'from the api', creator_user_id: 'api:u1' },
      ]);
      const [profile] = await one(`SELECT tool_policy FROM profiles WHERE id = 'main'`);
      expect(profile?.tool_policy).toEqual({
        users: { 'telegram:42': { disabled: ['terminal'] }, 'discord:42': { disabled: ['terminal'] }, 'api:nobody': { disabled: ['web'] } },
      });
      // The migrated database has the schema of a fresh one.
      const columns = `SELECT table_name || '.' || column_name AS c FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`;
      const fresh = (await sql.raw<{ c: string }>(columns).execute(database.db)).rows;
      expect((await sql.raw<{ c: string }>(columns).execute(db)).rows).toEqual(fresh);
    } finally {
      await db.destroy();
    }
  });
});

const S_TG = '00000000-0000-4000-8000-0000000000a1';
const S_DC = '00000000-0000-4000-8000-0000000000a2';
const S_API = '00000000-0000-4000-8000-0000000000a3';
const S_CRON = '00000000-0000-4000-8000-0000000000a4';
const TURN = '00000000-0000-4000-8000-0000000000b1';
const JOB_TG = '00000000-0000-4000-8000-0000000000c1';
const JOB_API = '00000000-0000-4000-8000-0000000000c2';

/** What the code before 0022 stored: bare ids everywhere. */
const LEGACY_ROWS = `
  UPDATE profiles SET tool_policy = '{"users": {"42": {"disabled": ["terminal"]}, "nobody": {"disabled": ["web"]}}}' WHERE id = 'main';
  INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, origin_user_id) VALUES
    ('${S_TG}', 'main', 'agent:main:telegram:dm:42', 'telegram', 'dm', '42', '42'),
    ('${S_DC}', 'main', 'agent:main:discord:dm:9', 'discord', 'dm', '9', '42'),
    ('${S_API}', 'main', 'agent:main:api:dm:c1', 'api', 'dm', 'c1', 'u1'),
    ('${S_CRON}', 'main', 'agent:main:cron:job:j1', 'cron', 'job', 'j1', '42');
  INSERT INTO inbound_events (id, session_id, platform, user_id, text, status, turn_id) VALUES
    (gen_random_uuid(), '${S_TG}', 'telegram', '42', 'hi', 'done', '${TURN}'),
    (gen_random_uuid(), '${S_DC}', 'discord', '42', 'hi', 'done', NULL),
    (gen_random_uuid(), '${S_API}', 'api', 'u1', 'hi', 'done', NULL),
    (gen_random_uuid(), '${S_CRON}', 'cron', '42', 'run', 'done', NULL);
  INSERT INTO memory_entries (profile_id, store, user_id, content) VALUES
    ('main', 'memory', '', 'the build runs on Fridays'),
    ('main', 'user', '42', '42 likes tea'),
    ('main', 'user', 'u1', 'u1 likes lists');
  INSERT INTO turns (id, session_id, status) VALUES ('${TURN}', '${S_TG}', 'done');
  INSERT INTO tool_waits (id, session_id, turn_id, tool_call_id, kind, tool_name, arguments, prompt, status, answered_by, expires_at) VALUES
    (gen_random_uuid(), '${S_TG}', '${TURN}', 'c1', 'approval', 'terminal', '{}', 'rm', 'approved', '42', now()),
    (gen_random_uuid(), '${S_TG}', '${TURN}', 'c2', 'approval', 'terminal', '{}', 'rm', 'expired', 'timeout', now());
  INSERT INTO session_approvals (session_id, pattern_key, approved_by) VALUES ('${S_TG}', 'rm', '42');
  INSERT INTO tool_refusals (session_id, tool_name, role, user_id, reason) VALUES ('${S_DC}', 'terminal', 'chat', '42', 'no');
  INSERT INTO cron_jobs (id, profile_id, creator_user_id, name, prompt, schedule, schedule_kind, interval_ms, origin) VALUES
    ('${JOB_TG}', 'main', '42', 'from telegram', 'p', 'every 1h', 'interval', 3600000, '{"platform": "telegram", "chatType": "dm", "chatId": "42"}'),
    ('${JOB_API}', 'main', 'u1', 'from the api', 'p', 'every 1h', 'interval', 3600000, NULL);
  INSERT INTO cron_runs (id, job_id, scheduled_for, trigger, status, session_id) VALUES
    (gen_random_uuid(), '${JOB_TG}', now(), 'schedule', 'succeeded', '${S_CRON}');
`;
