import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { isSummaryRequest, longText } from './support/long-chat.ts';
import { HERALD_BIN, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

/**
 * Issue 32, point 6: every model call is stored and priced, not only a turn's own. A background
 * review's calls (kind 'review') and a compression's summary (kind 'compression') are priced from
 * HERALD_PRICES_FILE and count for the person and the profile like a turn's, so GET /v1/usage shows
 * them (group_by=kind) and the budgets see them; only a turn's calls measure the transcript, so a
 * review's large prompt never makes the session look full.
 */

// gpt-test: $2 input, $0.50 cached input, $8 output per million tokens.
const PRICES = 'openai:\n  gpt-test: { input: 2, cached_input: 0.5, output: 8 }\n';
// The window Herald is told: compression past 75% of it (the floor for small windows), 75,000 tokens.
const WINDOW = 100_000;
/** A long message, 7,500 tokens by Herald's estimate: the tenth or so of a chat passes the threshold. */
const LONG = 30_000;
/** A turn's own call: 100 in, 10 out, $0.00028. */
const TURN_USAGE = { inputTokens: 100, outputTokens: 10 };
/** A review's call: 200,000 in (far past the threshold), 1,000 out: $0.408. */
const REVIEW_USAGE = { inputTokens: 200_000, outputTokens: 1000 };
/** A summary: 4,000 in, 400 out: $0.0112. */
const SUMMARY_USAGE = { inputTokens: 4000, outputTokens: 400 };
const INSTRUCTION = '[Background review]';
const exec = promisify(execFile);

const isReview = (request: FakeRequest) => request.messages.some((m) => m.role === 'user' && m.content.startsWith(INSTRUCTION));

function model(request: FakeRequest): FakeReply {
  if (isReview(request)) return { text: 'Nothing to save.', usage: REVIEW_USAGE };
  if (isSummaryRequest(request)) return { text: '## Goal\nCarry on with the conversation.', usage: SUMMARY_USAGE };
  return { text: `ok ${request.lastUserText.slice(0, 20)}`, usage: TURN_USAGE };
}

interface CallRow {
  kind: string;
  turn_id: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: string;
  price_known: boolean;
  user_id: string | null;
  profile_id: string | null;
}

describe('reviews and compressions are priced and counted like turns', () => {
  let fake: FakeLLM;
  let stack: Stack;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ handler: model });
    const dir = mkdtempSync(join(tmpdir(), 'herald-prices-'));
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'prices.yaml'), PRICES);
    stack = await startStack({
      model: fake,
      reviewers: 1,
      env: { HERALD_PRICES_FILE: join(dir, 'prices.yaml'), HERALD_CONTEXT_TOKENS: String(WINDOW), HERALD_PROVIDER_MAX_RETRIES: '0' },
    });
    // Reviews after every turn of the 'reviewed' profile only; none in main, where chats get long.
    expect((await stack.patch('/v1/profiles/main', { memory_review_interval: 0, skill_review_interval: 0 })).status).toBe(200);
    expect((await stack.post('/v1/profiles', { name: 'reviewed' })).status).toBe(201);
    expect((await stack.patch('/v1/profiles/reviewed', { memory_review_interval: 1, skill_review_interval: 0 })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const send = async (user: string, chat: string, text: string, profile?: string) => {
    const sent = await stack.post('/v1/messages?wait=60', { chat_id: chat, user_id: user, text, ...(profile ? { profile } : {}) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    return sent.body as { session_id: string; event_id: string; reply: { text: string } };
  };
  const callsOf = async (sessionId: string) =>
    (
      await sql<CallRow>`SELECT kind, turn_id, input_tokens, output_tokens, cost_usd, price_known, user_id, profile_id
                         FROM model_calls WHERE session_id = ${sessionId}::uuid ORDER BY id`.execute(stack.database.db)
    ).rows;
  const reviewDone = (sessionId: string) =>
    waitFor(
      async () => {
        const review = await stack.database.db.selectFrom('reviews').select(['status', 'turn_id']).where('session_id', '=', sessionId).executeTakeFirst();
        return review?.status === 'done' ? review : undefined;
      },
      { timeoutMs: 30_000, what: `the review of session ${sessionId}` },
    );

  it("stores a review's call as kind 'review', priced, for the reviewed turn's person and profile, and GET /v1/usage shows it", async () => {
    const sent = await send('ana', 'ana-reviewed', 'I like tea', 'reviewed');
    const review = await reviewDone(sent.session_id);
    expect(await callsOf(sent.session_id)).toEqual([
      { kind: 'turn', turn_id: review.turn_id, input_tokens: 100, output_tokens: 10, cost_usd: '0.000280000', price_known: true, user_id: 'api:ana', profile_id: 'reviewed' },
      { kind: 'review', turn_id: review.turn_id, input_tokens: 200_000, output_tokens: 1000, cost_usd: '0.408000000', price_known: true, user_id: 'api:ana', profile_id: 'reviewed' },
    ]);
    const report = await stack.get('/v1/usage?group_by=person,kind');
    expect(report.status).toBe(200);
    expect(report.body.group_by).toEqual(['person', 'kind']);
    const ana = report.body.rows.filter((row: { person: string }) => row.person === 'api:ana');
    expect(ana).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'review', calls: 1, input_tokens: 200_000, output_tokens: 1000, cost_usd: 0.408 }),
        expect.objectContaining({ kind: 'turn', calls: 1, cost_usd: 0.00028 }),
      ]),
    );
    // The person's own /usage and the daily token count take the review in too.
    expect((await send('ana', 'ana-usage', '/usage')).reply.text.split('\n')[0]).toMatch(/^Today \(UTC\): \$0\.41, 2 model calls, 200,100 in/);
    const day = await stack.database.db.selectFrom('usage_days').select('tokens').where('user_id', '=', 'api:ana').executeTakeFirstOrThrow();
    expect(Number(day.tokens)).toBe(100 + 10 + 200_000 + 1000);
  });

  it("does not take a review's large prompt for the session's size: the next turn is not compressed", async () => {
    // The review just stored reported 200,000 input tokens, far past the 75,000 of the threshold.
    const sessionId = (await send('ana', 'ana-reviewed', 'and coffee too', 'reviewed')).session_id;
    const compressions = await sql<{ n: string }>`SELECT count(*) AS n FROM session_compressions WHERE session_id = ${sessionId}::uuid`.execute(stack.database.db);
    expect(Number(compressions.rows[0]?.n)).toBe(0);
    const session = await stack.database.db.selectFrom('sessions').select(['ineffective_compressions', 'ended_at']).where('id', '=', sessionId).executeTakeFirstOrThrow();
    expect(session).toEqual({ ineffective_compressions: 0, ended_at: null });
    expect(fake.requests.filter((request) => request.sessionKey === `${sessionId}:summary`)).toEqual([]);
  });

  it("a budget a review spent is seen by the person's next message: 429 limit_exceeded, limit budget", async () => {
    expect((await stack.put('/v1/budgets/person/api:bob', { per_day: 0.01 })).status).toBe(200);
    // The turn itself costs $0.00028, 3% of the budget; its review costs $0.408.
    const sent = await send('bob', 'bob-reviewed', 'remember my name is Bob', 'reviewed');
    await reviewDone(sent.session_id);
    const refused = await stack.post('/v1/messages', { chat_id: 'bob-later', user_id: 'bob', text: 'hello again' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'limit_exceeded', limit: 'budget' });
    expect(refused.body.error.message).toMatch(/You have spent today's model budget for one person/);
  });

  it("stores a compression's summary as kind 'compression', priced, for the person whose message it is to answer", async () => {
    // Long messages in one chat, until the session is compressed into a child before a turn.
    const first = await send('cy', 'cy-long', `turn 1: ${longText('intro', LONG)}`);
    let current = first.session_id;
    for (let turn = 2; current === first.session_id && turn <= 20; turn++) current = (await send('cy', 'cy-long', `turn ${turn}: ${longText(`question ${turn}`, LONG)}`)).session_id;
    expect(current).not.toBe(first.session_id);
    const calls = await callsOf(first.session_id);
    const summaries = calls.filter((call) => call.kind === 'compression');
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    for (const call of summaries) {
      expect(call).toEqual({ kind: 'compression', turn_id: null, input_tokens: 4000, output_tokens: 400, cost_usd: '0.011200000', price_known: true, user_id: 'api:cy', profile_id: 'main' });
    }
    const report = await stack.get('/v1/usage?group_by=person,kind');
    const cy = report.body.rows.find((row: { person: string; kind: string }) => row.person === 'api:cy' && row.kind === 'compression');
    expect(cy).toMatchObject({ calls: summaries.length, input_tokens: 4000 * summaries.length, cost_usd: 0.0112 * summaries.length });
  }, 120_000);

  it('groups by kind alone, through the API and herald usage --group-by kind', async () => {
    const report = await stack.get('/v1/usage?group_by=kind');
    expect(report.status).toBe(200);
    expect(report.body.rows.map((row: { kind: string }) => row.kind).sort()).toEqual(['compression', 'review', 'turn']);
    const total = report.body.rows.reduce((sum: number, row: { calls: number }) => sum + row.calls, 0);
    expect(total).toBe(report.body.total.calls);
    const env = { ...process.env, ...stack.env, HERALD_URL: stack.url };
    const { stdout } = await exec(process.execPath, [HERALD_BIN, 'usage', '--group-by', 'kind'], { env });
    expect(stdout).toMatch(/^kind +calls +input +cached +output +cost \(USD\) +unpriced$/m);
    expect(stdout).toMatch(/^review +[2-9] +[\d,]+ +0 +[\d,]+ +\$\d+\.\d+$/m);
  });
});
