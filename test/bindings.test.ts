import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@herald/core';
import { ProfileCache } from '@herald/db';
import { createIngressServer } from '@herald/ingress';
import { TurnDoneListener } from '@herald/queue';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeHandler, FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { CHANNEL_ID, startFakeDiscord } from './support/fake-discord.ts';
import type { FakeDiscord } from './support/fake-discord.ts';
import { replicaOf, startStack, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 31, points 5 and 6: two Telegram bots (two accounts of HERALD_PLATFORMS_FILE against two
// fake Bot APIs), a Discord channel and the API, bound to three profiles whose models are on two
// fake providers. Every reply says which model and identity made it, and arrives through the bot
// the message came in on.

const KEYS = { FAST_KEY: 'sk-fast-secret-1', STRONG_KEY: 'sk-strong-secret-2', TELEGRAM_OPS_TOKEN: '7001:OPS-token_a', TELEGRAM_RESEARCH_TOKEN: '7002:RESEARCH-token_b' };

function writeFile(name: string, lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-bindings-'));
  chmodSync(dir, 0o755);
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n'));
  return path;
}

/** Answers as `name` with the model and the identity of the prompt; `remember: X` saves X about the person. */
function answeringAs(name: string): FakeHandler {
  return (request: FakeRequest) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return { text: `${name} noted it` };
    if (request.lastUserText === 'clean up') return { toolCalls: [{ name: 'terminal', arguments: { command: 'mkdir -p tmp && rm -r tmp && echo cleaned' } }] };
    if (request.lastUserText.startsWith('remember: ')) {
      return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'user', content: request.lastUserText.slice(10) } }] };
    }
    const identity = /I am ([A-Za-z]+)/.exec(request.system)?.[1] ?? 'nobody';
    return { text: `${name} (${String(request.body.model)}) as ${identity}: ${request.lastUserText.slice(0, 200)}` };
  };
}

describe('bindings route each bot, channel and chat to its profile', () => {
  let base: FakeLLM;
  let fast: FakeLLM;
  let strong: FakeLLM;
  let opsBot: FakeTelegram;
  let researchBot: FakeTelegram;
  let discord: FakeDiscord;
  let opsDiscord: FakeDiscord;
  let stack: Stack;

  beforeAll(async () => {
    base = await startFakeOpenAI({ handler: answeringAs('base') });
    fast = await startFakeOpenAI({ handler: answeringAs('fast') });
    strong = await startFakeAnthropic({ handler: answeringAs('strong') });
    opsBot = await startFakeTelegram({ token: KEYS.TELEGRAM_OPS_TOKEN, username: 'ops_bot' });
    researchBot = await startFakeTelegram({ token: KEYS.TELEGRAM_RESEARCH_TOKEN, username: 'research_bot' });
    discord = await startFakeDiscord();
    // A second Discord bot, its own token and gateway: the `ops` account of the platforms file.
    opsDiscord = await startFakeDiscord({ botId: '121212121212121212' });
    const providers = writeFile('providers.yaml', [
      'providers:',
      '  fast:',
      '    type: openai',
      `    base_url: ${fast.url}`,
      '    api_key_env: FAST_KEY',
      '  strong:',
      '    type: anthropic',
      `    base_url: ${strong.url}`,
      '    api_key_env: STRONG_KEY',
      '',
    ]);
    const platforms = writeFile('platforms.yaml', [
      'telegram:',
      '  - account: ops',
      '    token_env: TELEGRAM_OPS_TOKEN',
      `    api_root: ${opsBot.apiRoot}`,
      "    allowed_users: ['*']",
      '  - account: research',
      '    token_env: TELEGRAM_RESEARCH_TOKEN',
      `    api_root: ${researchBot.apiRoot}`,
      '    allowed_users: "42"',
      'discord:',
      '  - account: ops',
      '    token_env: DISCORD_OPS_TOKEN',
      `    api_base: ${opsDiscord.apiBase}`,
      "    allowed_users: ['*']",
      '',
    ]);
    stack = await startStack({
      model: base,
      scheduler: true,
      env: {
        ...KEYS,
        ...discord.env,
        DISCORD_OPS_TOKEN: opsDiscord.token,
        DISCORD_ALLOWED_USERS: '*',
        HERALD_PROVIDERS_FILE: providers,
        HERALD_PLATFORMS_FILE: platforms,
        TELEGRAM_POLL_TIMEOUT_SECONDS: '1',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        HERALD_OPERATORS: 'api:admin,telegram:42',
      },
    });
    for (const name of ['ops', 'research']) expect((await stack.post('/v1/profiles', { name })).status).toBe(201);
    await stack.patch('/v1/profiles/ops', { identity: 'I am Opsy, terse.', model: { primary: 'fast/gpt-ops' } });
    await stack.patch('/v1/profiles/research', { identity: 'I am Sage, thorough.', model: { primary: 'strong/claude-research' } });
  });

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([fast?.close(), strong?.close(), opsBot?.close(), researchBot?.close(), discord?.close(), opsDiscord?.close()]);
  });

  const botReply = (bot: FakeTelegram, chatId: number, pattern: RegExp) =>
    waitFor(async () => bot.botMessages(chatId).find((message) => pattern.test(message.text)), { timeoutMs: 30_000, what: `a reply matching ${pattern}` });

  it('refuses a PUT naming a missing profile with a 400 naming the rule, and writes nothing', async () => {
    const refused = await stack.put('/v1/bindings', {
      bindings: [
        { platform: 'telegram', profile: 'ops' },
        { chat_id: '1', profile: 'ghost' },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.field).toBe('bindings.1.profile');
    expect(refused.body.error.message).toContain('ghost');
    const malformed = await stack.put('/v1/bindings', { bindings: [{ platform: 'telegram', profile: 'ops' }, { profile: 'ops' }] });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.field).toMatch(/^bindings\.1/);
    expect((await stack.get('/v1/bindings')).body).toEqual({ bindings: [] });
  });

  it('answers each bot, channel and API chat with its profile model and identity, through the bot it came in on', async () => {
    const bindings = [
      { platform: 'telegram', account: 'ops', profile: 'ops' },
      { platform: 'telegram', account: 'research', profile: 'research' },
      { platform: 'discord', channel_id: CHANNEL_ID, profile: 'research' },
      { platform: 'api', chat_id: 'ops-room', profile: 'ops' },
    ];
    const put = await stack.put('/v1/bindings', { bindings });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.bindings).toEqual(bindings);
    expect((await stack.get('/v1/bindings')).body.bindings).toEqual(bindings);

    opsBot.userMessage({ chatId: 42, from: { id: 42, username: 'ann' }, text: 'disk usage?' });
    await botReply(opsBot, 42, /^fast \(gpt-ops\) as Opsy: disk usage\?/);
    researchBot.userMessage({ chatId: 42, from: { id: 42, username: 'ann' }, text: 'survey please' });
    await botReply(researchBot, 42, /^strong \(claude-research\) as Sage: survey please/);
    // Each reply left through its own bot only.
    expect(researchBot.botMessages(42).some((message) => message.text.includes('Opsy'))).toBe(false);
    expect(opsBot.botMessages(42).some((message) => message.text.includes('Sage'))).toBe(false);

    await discord.ready();
    discord.userMessage({ channelId: CHANNEL_ID, userId: '555', content: 'what is new?', mentionBot: true });
    await waitFor(async () => discord.botMessages(CHANNEL_ID).find((message) => message.content.startsWith('strong (claude-research) as Sage: what is new?')), {
      timeoutMs: 30_000,
      what: 'the Discord reply',
    });

    const room = await stack.post('/v1/messages?wait=60', { chat_id: 'ops-room', user_id: 'bob', text: 'status' });
    expect(room.body.reply.text).toBe('fast (gpt-ops) as Opsy: status');
    const other = await stack.post('/v1/messages?wait=60', { chat_id: 'lobby', user_id: 'bob', text: 'hello' });
    expect(other.body.reply.text).toBe('base (gpt-test) as nobody: hello');

    // The console's view of profiles shows what routes to each.
    const listed = (await stack.get('/v1/profiles')).body.profiles;
    expect(listed.find((p: any) => p.name === 'research').bindings).toEqual([
      { index: 1, match: { platform: 'telegram', account: 'research' } },
      { index: 2, match: { platform: 'discord', channel_id: CHANNEL_ID } },
    ]);
    // A profile traffic is bound to cannot be deleted.
    const deleted = await stack.delete('/v1/profiles/ops');
    expect(deleted.status).toBe(409);
    expect(deleted.body.error.message).toMatch(/binding/);
  });

  it('answers a message that came through a second Discord bot through that bot, and reports its profile cron jobs there', async () => {
    const current = (await stack.get('/v1/bindings')).body.bindings;
    // The account and the channel beat the channel alone (bound to research above).
    const rule = { platform: 'discord', account: 'ops', channel_id: CHANNEL_ID, profile: 'ops' };
    expect((await stack.put('/v1/bindings', { bindings: [...current, rule] })).status).toBe(200);
    await opsDiscord.ready();
    opsDiscord.userMessage({ channelId: CHANNEL_ID, userId: '555', content: 'any alerts?', mentionBot: true });
    const replied = (fake: FakeDiscord, text: string) => fake.botMessages(CHANNEL_ID).find((message) => message.content.includes(text));
    await waitFor(async () => opsDiscord.botMessages(CHANNEL_ID).find((message) => message.content.startsWith('fast (gpt-ops) as Opsy: any alerts?')), {
      timeoutMs: 30_000,
      what: 'the reply through the second Discord bot',
    });
    expect(replied(discord, 'any alerts?')).toBeUndefined();
    const sessions = await stack.database.db.selectFrom('sessions').select(['profile_id', 'session_key']).where('platform', '=', 'discord').where('account', '=', 'ops').execute();
    expect(sessions).toEqual([{ profile_id: 'ops', session_key: expect.stringMatching(/^agent:ops:discord@ops:/) }]);

    // A cron job of ops naming no account reports through the Discord account bound to ops.
    const job = await stack.post('/v1/cron/jobs', { user_id: 'admin', schedule: 'every 1d', profile: 'ops', prompt: 'alert digest', deliver: `discord:${CHANNEL_ID}` });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect((await stack.post(`/v1/cron/jobs/${job.body.job_id}/run`, {})).status).toBe(202);
    await waitFor(async () => replied(opsDiscord, 'alert digest'), { timeoutMs: 30_000, what: 'the cron report through the second Discord bot' });
    expect(replied(discord, 'alert digest')).toBeUndefined();
  });

  it("keeps one person's history and memory apart per profile", async () => {
    opsBot.userMessage({ chatId: 42, from: { id: 42 }, text: 'remember: Ann runs the night shift' });
    await botReply(opsBot, 42, /^fast noted it/);
    researchBot.userMessage({ chatId: 42, from: { id: 42 }, text: 'what do you know of me?' });
    await botReply(researchBot, 42, /what do you know of me/);
    const researchCall = strong.requests.filter((request) => request.lastUserText === 'what do you know of me?').at(-1);
    const seen = JSON.stringify(researchCall?.messages) + (researchCall?.system ?? '');
    expect(seen).not.toContain('disk usage');
    expect(seen).not.toContain('night shift');
    const opsMemory = await stack.get('/v1/profiles/ops/users/telegram:42/memory');
    const researchMemory = await stack.get('/v1/profiles/research/users/telegram:42/memory');
    expect(JSON.stringify(opsMemory.body)).toContain('night shift');
    expect(JSON.stringify(researchMemory.body)).not.toContain('night shift');
    // Two sessions, one per profile and bot; their keys name the account.
    const sessions = await stack.database.db.selectFrom('sessions').select(['profile_id', 'session_key', 'account']).where('platform', '=', 'telegram').orderBy('profile_id').execute();
    expect(sessions).toEqual([
      { profile_id: 'ops', session_key: 'agent:ops:telegram@ops:dm:42', account: 'ops' },
      { profile_id: 'research', session_key: 'agent:research:telegram@research:dm:42', account: 'research' },
    ]);
  });

  it('holds each account to its own allowlist', async () => {
    researchBot.userMessage({ chatId: 77, from: { id: 77 }, text: 'let me in' });
    await botReply(researchBot, 77, /allowlist/);
    opsBot.userMessage({ chatId: 77, from: { id: 77 }, text: 'hi ops' });
    await botReply(opsBot, 77, /^fast \(gpt-ops\) as Opsy: hi ops/);
  });

  it("delivers a cron job of a profile through that profile's bot when the target names no account", async () => {
    const created = await stack.post('/v1/cron/jobs', { user_id: 'admin', schedule: 'every 1d', profile: 'ops', prompt: 'nightly report', deliver: 'telegram:42' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await stack.post(`/v1/cron/jobs/${created.body.job_id}/run`, {})).status).toBe(202);
    await botReply(opsBot, 42, /^fast \(gpt-ops\) as Opsy: .*nightly report/s);
    // A target naming an account goes through that one.
    const named = await stack.post('/v1/cron/jobs', { user_id: 'admin', schedule: 'every 1d', profile: 'ops', prompt: 'weekly digest', deliver: 'telegram@research:42' });
    expect(named.status, JSON.stringify(named.body)).toBe(201);
    await stack.post(`/v1/cron/jobs/${named.body.job_id}/run`, {});
    await botReply(researchBot, 42, /weekly digest/);
    expect(opsBot.botMessages(42).some((message) => message.text.includes('weekly digest'))).toBe(false);
  });

  it('asks for approval and hands a session off through the bot of the conversation', async () => {
    researchBot.userMessage({ chatId: 42, from: { id: 42 }, text: 'clean up' });
    const prompt = await botReply(researchBot, 42, /Approval needed:/);
    expect(opsBot.botMessages(42).some((message) => message.text.includes('Approval needed'))).toBe(false);
    const approve = prompt.reply_markup?.inline_keyboard.flat().find((button) => button.text === 'Approve');
    researchBot.pressButton({ chatId: 42, messageId: prompt.message_id, from: { id: 42 }, data: approve!.callback_data });
    await botReply(researchBot, 42, /^strong noted it/);

    // /sethome on the ops bot, then an API session of the ops profile moves there.
    opsBot.userMessage({ chatId: 42, from: { id: 42 }, text: '/sethome' });
    await botReply(opsBot, 42, /now the telegram home chat/);
    const started = await stack.post('/v1/messages?wait=60', { chat_id: 'ops-room', user_id: 'bob', text: 'start here' });
    const asked = await stack.post(`/v1/sessions/${started.body.session_id}/handoff`, { platform: 'telegram' });
    expect(asked.status, JSON.stringify(asked.body)).toBeLessThan(300);
    await botReply(opsBot, 42, /^Handed off from api/);
    expect(researchBot.botMessages(42).some((message) => /^Handed off/.test(message.text))).toBe(false);
    const moved = await stack.database.db.selectFrom('sessions').select(['session_key', 'account']).where('id', '=', started.body.session_id).executeTakeFirstOrThrow();
    expect(moved).toEqual({ session_key: 'agent:ops:telegram@ops:dm:42', account: 'ops' });
  });

  it('applies a binding change in a second ingress without a restart', async () => {
    const replica = replicaOf(stack);
    const cache = new ProfileCache({ db: stack.database.db, url: stack.config.database.url });
    await cache.start();
    const listener = new TurnDoneListener(replica.deps.notices, stack.config.redis.queuePrefix);
    await listener.start();
    const app = createIngressServer({ config: stack.config, db: stack.database.db, queue: replica.deps.queue, notices: replica.deps.notices, listener, logger: silentLogger, profiles: cache });
    const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('0.0.0.0', '127.0.0.1');
    const send = async (text: string) => {
      const response = await fetch(`${url}/v1/messages?wait=60`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: 'night-desk', user_id: 'carol', text }),
      });
      return ((await response.json()) as { reply: { text: string } }).reply.text;
    };
    try {
      expect(await send('first')).toBe('base (gpt-test) as nobody: first');
      // Through the first ingress: the second one's cached list is dropped by the NOTIFY.
      const current = (await stack.get('/v1/bindings')).body.bindings;
      expect((await stack.put('/v1/bindings', { bindings: [...current, { platform: 'api', chat_id: 'night-desk', profile: 'research' }] })).status).toBe(200);
      await waitFor(async () => ((await send('again')).startsWith('strong') ? true : undefined), { timeoutMs: 20_000, what: 'the second ingress to route by the new binding' });
    } finally {
      await app.close();
      await cache.stop();
      await replica.close();
    }
  });
});
