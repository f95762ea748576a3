import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployDiscordCommands, DiscordIngress } from '@herald/platforms/discord';
import { addPerson, createLinkCode, getPerson } from '@herald/people';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { BOT_ID, CHANNEL_ID, startFakeDiscord, THREAD_ID } from './support/fake-discord.ts';
import type { FakeDiscord } from './support/fake-discord.ts';
import { countQueries } from './support/db-probes.ts';
import { replicaOf, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const ALICE = '500000000000000001';
const DM_CHANNEL = '600000000000000001';

describe('Discord end to end: a real discord.js client against a fake gateway and REST', () => {
  let llm: FakeLLM;
  let discord: FakeDiscord;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    discord = await startFakeDiscord();
    stack = await startStack({
      model: llm,
      env: {
        ...discord.env,
        DISCORD_ALLOWED_USERS: ALICE,
        HERALD_DELIVERY_POLL_MS: '100',
        // Replies go out whole: these tests are about the outbox's sends (a 429 on its first POST);
        // answers growing by edits are tested in chat-drafts.test.ts.
        HERALD_STREAMING_DISCORD: 'off',
      },
    });
    await discord.ready();
  });
  afterAll(async () => {
    await stack.stop();
    await discord.close();
  });

  const waitForBotMessages = (channelId: string, count: number) =>
    waitFor(async () => (discord.botMessages(channelId).length >= count ? discord.botMessages(channelId) : undefined), {
      what: `${count} bot messages in ${channelId}`,
    });

  it('answers a DM', async () => {
    llm.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    discord.userMessage({ channelId: DM_CHANNEL, userId: ALICE, content: 'hello from a DM', dm: true });
    const [reply] = await waitForBotMessages(DM_CHANNEL, 1);
    expect(reply?.content).toBe('echo: hello from a DM');
    expect(reply?.nonce).toHaveLength(25);
  });

  it('answers a mention in a guild channel, quoting it, and ignores messages not addressed to it', async () => {
    llm.handler = (request) => ({ text: `channel: ${request.lastUserText}` });
    const before = llm.requests.length;
    discord.userMessage({ channelId: CHANNEL_ID, userId: ALICE, content: 'talking among ourselves' });
    const mention = discord.userMessage({ channelId: CHANNEL_ID, userId: ALICE, content: `<@${BOT_ID}> what is up`, mentionBot: true });
    const [reply] = await waitForBotMessages(CHANNEL_ID, 1);
    expect(reply?.content).toBe('channel: what is up');
    expect(reply?.message_reference?.message_id).toBe(mention);
    expect(llm.requests.length - before).toBe(1);
  });

  it('keeps a thread as its own session and answers inside it', async () => {
    llm.handler = (request) => ({ text: `users seen: ${request.messages.filter((m) => m.role === 'user').length}` });
    discord.userMessage({ channelId: THREAD_ID, userId: ALICE, content: `<@${BOT_ID}> in the thread`, mentionBot: true });
    const [reply] = await waitForBotMessages(THREAD_ID, 1);
    expect(reply?.content).toBe('users seen: 1');
    const sessions = await stack.database.db.selectFrom('sessions').select(['chat_id', 'thread_id']).where('platform', '=', 'discord').where('chat_id', '=', CHANNEL_ID).execute();
    expect(sessions.map((s) => s.thread_id).sort()).toEqual([THREAD_ID, null]);
  });

  it('splits a long reply at 2000 characters on paragraph boundaries, and waits out a 429', async () => {
    const paragraphs = Array.from({ length: 5 }, (_, i) => `Part ${i}: ${'lorem ipsum '.repeat(80).trim()}`);
    llm.handler = () => ({ text: paragraphs.join('\n\n') });
    discord.rateLimitNext(`/channels/${DM_CHANNEL}/messages`, 0.3);
    const before = discord.botMessages(DM_CHANNEL).length;
    discord.userMessage({ channelId: DM_CHANNEL, userId: ALICE, content: 'long please', dm: true });
    const messages = await waitFor(async () => {
      const sent = discord.botMessages(DM_CHANNEL).slice(before);
      return sent.some((m) => m.content.includes('Part 4')) ? sent : undefined;
    });
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) {
      expect(message.content.length).toBeLessThanOrEqual(2000);
      expect(message.content).toMatch(/^Part \d: /);
    }
    expect(messages.map((m) => m.content).join('\n\n')).toBe(paragraphs.join('\n\n'));
    // The last part reaches Discord a moment before the consumer stores the receipt.
    const row = await waitFor(async () => {
      const latest = await stack.database.db
        .selectFrom('outbox')
        .select(['attempts', 'status', 'receipt'])
        .where('platform', '=', 'discord')
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      return latest.status === 'sending' ? undefined : latest;
    });
    expect(row.status).toBe('delivered');
    expect(row.attempts).toBe(2);
    expect((row.receipt as any).messageIds).toEqual(messages.map((m) => m.id));
  });

  it('asks for approval with buttons, and a press resumes the parked turn', async () => {
    llm.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') return { text: `done: ${last.content.slice(0, 200)}` };
      if (request.lastUserText === 'clean up') return { toolCalls: [{ name: 'terminal', arguments: { command: 'mkdir -p tmp && rm -r tmp && echo cleaned' } }] };
      return { text: `echo: ${request.lastUserText}` };
    };
    const before = discord.botMessages(DM_CHANNEL).length;
    discord.userMessage({ channelId: DM_CHANNEL, userId: ALICE, content: 'clean up', dm: true });
    const prompt = await waitFor(async () =>
      discord
        .botMessages(DM_CHANNEL)
        .slice(before)
        .find((m) => m.content.startsWith('Approval needed:')),
    );
    const buttons = prompt.components?.flatMap((row) => row.components) ?? [];
    expect(buttons.map((b) => b.label)).toEqual(['Approve', 'Allow for session', 'Deny']);
    discord.pressButton({ channelId: DM_CHANNEL, userId: ALICE, messageId: prompt.id, customId: buttons[0]!.custom_id, dm: true });
    const done = await waitFor(
      async () =>
        discord
          .botMessages(DM_CHANNEL)
          .slice(before)
          .find((m) => m.content.startsWith('done:')),
      { what: 'the resumed turn' },
    );
    expect(done.content).toContain('cleaned');
    expect(discord.requests.some((r) => /^\/interactions\/\d+\/[^/]+\/callback$/.test(r.path))).toBe(true);
  });

  it('refuses someone not on the allowlist without a model call', async () => {
    const before = llm.requests.length;
    discord.userMessage({ channelId: '600000000000000099', userId: '500000000000000099', content: 'hi', dm: true });
    const [refusal] = await waitForBotMessages('600000000000000099', 1);
    expect(refusal?.content).toMatch(/allowlist/);
    expect(llm.requests.length).toBe(before);
  });

  it('answers slash commands by editing the deferred reply', async () => {
    const id = discord.slashCommand({ channelId: CHANNEL_ID, userId: ALICE, name: 'queue', option: 'collect' });
    const [edited] = await waitForBotMessages(`interaction:interaction-token-${id}`, 1);
    expect(edited?.content).toBe('Queue mode set to collect.');
    expect(discord.requests.some((r) => r.path === `/interactions/${id}/interaction-token-${id}/callback`)).toBe(true);
    expect(await deployDiscordCommands(stack.config.platforms.discord!)).toBe(13);
    expect((discord.commands as any[]).map((c) => c.name)).toEqual(['new', 'reset', 'status', 'stop', 'queue', 'approve', 'deny', 'compress', 'sethome', 'handoff', 'link', 'usage', 'help']);
    const handoff = (discord.commands as any[]).find((c) => c.name === 'handoff');
    expect(handoff.options).toEqual([expect.objectContaining({ name: 'platform', description: 'telegram or discord' })]);
  });

  it('links the Discord account to a person with /link CODE, once (issue 32, point 5)', async () => {
    const db = stack.database.db;
    const person = await addPerson(db, { displayName: 'Alice', identities: ['api:alice'] }, 'test');
    const code = await createLinkCode(db, person.id, 'test');
    const id = discord.slashCommand({ channelId: CHANNEL_ID, userId: ALICE, name: 'link', option: code.code });
    const [edited] = await waitForBotMessages(`interaction:interaction-token-${id}`, 1);
    expect(edited?.content).toMatch(/^Linked: you are Alice here too/);
    expect((await getPerson(db, person.id))?.identities).toEqual(['api:alice', `discord:${ALICE}`]);
    const again = discord.slashCommand({ channelId: CHANNEL_ID, userId: ALICE, name: 'link', option: code.code });
    const [refused] = await waitForBotMessages(`interaction:interaction-token-${again}`, 1);
    expect(refused?.content).toMatch(/not valid/);
  });

  it('holds one gateway connection per shard across replicas', async () => {
    const claims = countQueries(stack.database.db, 'platform_leases');
    const second = replicaOf(stack, claims.db);
    const replica = new DiscordIngress({ ...second.deps, config: stack.config.platforms.discord!, leaseTtlMs: 600 });
    const task = replica.start();
    try {
      // The replica has tried for the shard's lease several times while the first holder keeps it.
      await waitFor(async () => claims.count() >= 3, { what: 'three lease claims by the replica' });
      expect(task.holding).toBe(false);
      const leases = await stack.database.db.selectFrom('platform_leases').select('owner').execute();
      expect(leases).toHaveLength(1);
      expect(leases[0]?.owner).not.toBe('replica-2');
      expect(discord.connections()).toBe(1);
      expect(discord.identifies).toBe(1);
    } finally {
      await replica.stop();
      await second.close();
    }
  });
});
