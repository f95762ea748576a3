import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptInbound } from '@herald/inbox';
import { LimitExceededError } from '@herald/limits';
import type { AcceptOptions } from '@herald/inbox';
import { metricsText } from '@herald/telemetry';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { metricValue } from '../support/prometheus.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 17, point 14: per-person and global limits on turns per minute, turns in flight and model
 * tokens per day, counted in Postgres (herald_check_limits). Over a limit the person is told why and
 * when to retry (429 with Retry-After from the API, one line in a chat), nothing is stored and
 * nothing accepted is lost; each refusal is counted in herald_quota_refusals_total by limit.
 */

const SECRET = 'people-limits_1';
const OFF = {
  turnsPerMinute: 0,
  globalTurnsPerMinute: 0,
  concurrentTurns: 0,
  globalConcurrentTurns: 0,
  tokensPerDay: 0,
  globalTokensPerDay: 0,
  attachmentBytesPerDay: 0,
  globalAttachmentBytesPerDay: 0,
};

describe('limits', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  let release: () => void = () => undefined;
  let gate = Promise.resolve();

  /** Messages saying "slow" are held until the test releases them: turns stay in flight. */
  const handler = async (request: FakeRequest): Promise<FakeReply> => {
    if (request.lastUserText.includes('slow')) await gate;
    return { text: `echo: ${request.lastUserText}` };
  };

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler });
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: { ...openChatsEnv(SECRET, telegram), HERALD_LIMIT_TURNS_PER_MINUTE: '3', HERALD_LIMIT_CONCURRENT_TURNS: '2' },
    });
  });
  afterAll(async () => {
    release();
    await stack.stop();
    await telegram.close();
  });

  /** The refusals of one person in the audit trail, oldest first: [subject, detail]. */
  const audited = async (actor: string) =>
    (
      await sql<{ subject: string; detail: Record<string, unknown> }>`
        SELECT subject, detail FROM audit_log WHERE kind = 'refusal' AND actor = ${actor} ORDER BY id`.execute(stack.database.db)
    ).rows.map((row) => [row.subject, row.detail]);
  const refusals = async (limit: string) => metricValue((await metricsText()).text, 'herald_quota_refusals_total', { limit }) ?? 0;
  const storedFor = async (userId: string) => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM inbound_events WHERE user_id = ${userId}`.execute(stack.database.db)).rows[0]?.n);

  it('API: the 4th message of a minute gets 429 with Retry-After and the reason; nothing is stored; others go on', async () => {
    const before = await refusals('turns_per_minute');
    for (let i = 1; i <= 3; i++) {
      const sent = await stack.post('/v1/messages?wait=20', { chat_id: `rate-${i}`, user_id: 'rate', text: `hello ${i}` });
      expect(sent.status, `message ${i}`).toBe(200);
    }
    const response = await fetch(`${stack.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.env.HERALD_API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'rate-4', user_id: 'rate', text: 'hello 4' }),
    });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = (await response.json()) as { error: { code: string; limit: string; message: string } };
    expect(body.error).toMatchObject({ code: 'limit_exceeded', limit: 'turns_per_minute' });
    expect(body.error.message).toMatch(/^Not taken: You have sent as many messages this minute as this Herald allows one person; send it again in \d+ s\.$/);
    expect(await storedFor('api:rate')).toBe(3);
    expect(await refusals('turns_per_minute')).toBe(before + 1);
    // The refusal is in the audit trail (herald_accept_message writes it in the refusing call).
    expect(await audited('api:rate')).toEqual([['limit:turns_per_minute', { limit: 'turns_per_minute', retry_after: retryAfter, platform: 'api', chat_id: 'rate-4' }]]);
    // The limit is per person: someone else is answered.
    expect((await stack.post('/v1/messages?wait=20', { chat_id: 'rate-other', user_id: 'other', text: 'hi' })).status).toBe(200);
  });

  it('Telegram: a message over the limit gets a one-line reply in the chat; the ones before it are answered', async () => {
    const person = { id: 7701, username: 'eager' };
    // One at a time, each after the answer to the one before: only the per-minute limit applies.
    for (let i = 1; i <= 4; i++) {
      const update = telegram.userMessage({ chatId: person.id, from: person, text: `ping ${i}` });
      expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
      await waitFor(async () => (telegram.botMessages(person.id).length >= i ? true : undefined), { what: `the answer to ping ${i}` });
    }
    const texts = await waitFor(
      async () => {
        const all = telegram.botMessages(person.id).map((message) => message.text);
        return all.filter((text) => text.startsWith('echo:')).length === 3 && all.some((text) => text.startsWith('Not taken:')) ? all : undefined;
      },
      { what: 'three answers and one refusal' },
    );
    const refusal = texts.find((text) => text.startsWith('Not taken:'))!;
    expect(refusal).toMatch(/messages this minute/);
    expect(refusal.split('\n')).toHaveLength(1);
    expect(texts.filter((text) => text.startsWith('echo:')).sort()).toEqual(['echo: ping 1', 'echo: ping 2', 'echo: ping 3']);
    expect(await storedFor(`telegram:${person.id}`)).toBe(3);
    expect((await audited(`telegram:${person.id}`)).map(([subject]) => subject)).toEqual(['limit:turns_per_minute']);
  });

  it('API: a third turn in flight is refused with 429 until one is answered; both held turns complete', async () => {
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const before = await refusals('concurrent_turns');
    const first = await stack.post('/v1/messages', { chat_id: 'busy-1', user_id: 'busy', text: 'slow one' });
    const second = await stack.post('/v1/messages', { chat_id: 'busy-2', user_id: 'busy', text: 'slow two' });
    expect([first.status, second.status]).toEqual([202, 202]);
    const third = await stack.post('/v1/messages', { chat_id: 'busy-3', user_id: 'busy', text: 'hello' });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'limit_exceeded', limit: 'concurrent_turns' });
    expect(third.body.error.message).toMatch(/requests in progress/);
    expect(await refusals('concurrent_turns')).toBe(before + 1);
    expect(await audited('api:busy')).toEqual([['limit:concurrent_turns', { limit: 'concurrent_turns', retry_after: 10, platform: 'api', chat_id: 'busy-3' }]]);
    release();
    expect((await stack.waitForEvent(first.body.event_id)).reply.text).toBe('echo: slow one');
    expect((await stack.waitForEvent(second.body.event_id)).reply.text).toBe('echo: slow two');
    expect((await stack.post('/v1/messages?wait=20', { chat_id: 'busy-3', user_id: 'busy', text: 'hello' })).status).toBe(200);
  });

  it("counts model tokens per person per day from the recorded calls, and refuses past the day's budget", async () => {
    const sent = await stack.post('/v1/messages?wait=20', { chat_id: 'tokens', user_id: 'spender', text: 'how much?' });
    expect(sent.status).toBe(200);
    const usage = await sql<{ day_tokens: string; call_tokens: string }>`
      SELECT (SELECT tokens FROM usage_days WHERE user_id = 'api:spender' AND day = (now() AT TIME ZONE 'UTC')::date) AS day_tokens,
             (SELECT sum(input_tokens + output_tokens) FROM model_calls WHERE session_id = ${sent.body.session_id}::uuid) AS call_tokens`.execute(stack.database.db);
    const used = Number(usage.rows[0]?.day_tokens);
    expect(used).toBeGreaterThan(0);
    expect(used).toBe(Number(usage.rows[0]?.call_tokens));

    const message = { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'tokens', userId: 'api:spender', text: 'more?' };
    const options = (limits: Partial<typeof OFF>): AcceptOptions => ({ backlogLimit: 50, limits: { ...OFF, ...limits } });
    const refused = await acceptInbound(stack.database.db, message, options({ tokensPerDay: used })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LimitExceededError);
    expect(refused).toMatchObject({ limit: 'tokens_per_day' });
    expect((refused as LimitExceededError).retryAfterSeconds).toBeGreaterThan(0);
    expect((refused as LimitExceededError).retryAfterSeconds).toBeLessThanOrEqual(86_400);
    expect((refused as LimitExceededError).message).toMatch(/today's model budget for one person; it renews at midnight UTC/);
    // Someone else is within the per-person budget, not within a global one the spender used up.
    const other = { ...message, userId: 'api:frugal', chatId: 'tokens-2' };
    await expect(acceptInbound(stack.database.db, other, options({ globalTokensPerDay: used }))).rejects.toMatchObject({ limit: 'global_tokens_per_day' });
    const accepted = await acceptInbound(stack.database.db, other, options({ tokensPerDay: used }));
    expect(accepted.duplicate).toBe(false);
    expect((await audited('api:spender')).map(([subject]) => subject)).toEqual(['limit:tokens_per_day']);
    expect((await audited('api:frugal')).map(([subject]) => subject)).toEqual(['limit:global_tokens_per_day']);
  });

  it('refuses past the global limits, counted over everyone, in the accepting transaction', async () => {
    // Someone's message that no worker has taken yet: at least one message this minute and in flight.
    const seed = { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'global-seed', userId: 'api:seed', text: 'waiting' };
    await acceptInbound(stack.database.db, seed);
    const counts = await sql<{ minute: string; open: string }>`
      SELECT (SELECT count(*) FROM inbound_events WHERE kind = 'message' AND received_at > clock_timestamp() - interval '1 minute') AS minute,
             (SELECT count(*) FROM inbound_events WHERE kind = 'message' AND status IN ('pending', 'processing')) AS open`.execute(stack.database.db);
    const minute = Number(counts.rows[0]?.minute);
    const open = Number(counts.rows[0]?.open);
    expect(minute).toBeGreaterThan(0);
    const message = { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'global', userId: 'api:newcomer', text: 'hi' };
    const limits = (extra: Partial<typeof OFF>): AcceptOptions => ({ backlogLimit: 50, limits: { ...OFF, ...extra } });
    await expect(acceptInbound(stack.database.db, message, limits({ globalTurnsPerMinute: minute }))).rejects.toMatchObject({ limit: 'global_turns_per_minute' });
    await expect(acceptInbound(stack.database.db, message, limits({ globalConcurrentTurns: open }))).rejects.toMatchObject({ limit: 'global_concurrent_turns' });
    expect(await storedFor('api:newcomer')).toBe(0);
    // One more fits under a global limit one above today's count.
    const accepted = await acceptInbound(stack.database.db, message, limits({ globalTurnsPerMinute: minute + 1 }));
    expect(accepted.duplicate).toBe(false);
    expect(await storedFor('api:newcomer')).toBe(1);
  });
});
