import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startFakeDiscord } from '../support/fake-discord.ts';
import type { FakeDiscord } from '../support/fake-discord.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

const PERSON = '500000000000000077';
const DM = '600000000000000077';

describe('no poison messages: Discord gateway events (issue 17, point 3)', () => {
  let llm: FakeLLM;
  let discord: FakeDiscord;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `ok: ${request.lastUserText}` }) });
    discord = await startFakeDiscord();
    stack = await startStack({ model: llm, env: { ...discord.env, DISCORD_ALLOWED_USERS: '*', HERALD_DELIVERY_POLL_MS: '100' } });
    await discord.ready();
  });
  afterAll(async () => {
    await stack?.stop();
    await discord?.close();
  });

  it('dead-letters an event that fails the same way twice, with its reason, and the gateway goes on', async () => {
    // Malformed platform data: an author id no index can hold (Postgres refuses the row every time).
    const huge = randomBytes(8000).toString('hex');
    const poison = discord.userMessage({ channelId: DM, userId: huge, content: 'poison', dm: true });
    const letters = await waitFor(
      async () => {
        const all = (await stack.get('/v1/admin/dead-letters')).body.dead_letters as any[];
        const found = all.filter((letter) => letter.kind === 'discord_event');
        return found.length > 0 ? found : undefined;
      },
      { what: 'the dead letter' },
    );
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ id: `discord:${poison}`, failures: 2 });
    expect(letters[0].reason).toMatch(/index row requires \d+ bytes/);
    expect((await stack.get('/v1/admin/status')).body.dead_letters.discord_events).toBe(1);
    // Discord may send the event again (a resumed gateway session): a dead letter is skipped, not counted again.
    const again = await stack.database.db.selectFrom('dead_letters').select(['failures', 'status']).where('key', '=', `discord:${poison}`).executeTakeFirstOrThrow();
    expect(again).toEqual({ failures: 2, status: 'dead' });
    // The gateway goes on: the next person's message is answered.
    discord.userMessage({ channelId: DM, userId: PERSON, content: 'still there?', dm: true });
    await waitFor(async () => (discord.botMessages(DM).length > 0 ? true : undefined), { what: 'the answer after the dead letter' });
    expect(discord.botMessages(DM).map((message) => message.content)).toEqual(['ok: still there?']);
  });
});
