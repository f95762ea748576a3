import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '@herald/limits';
import { metricsText } from '@herald/telemetry';
import { metricValue } from './support/prometheus.ts';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { openChatsEnv } from './support/chat-platforms-env.ts';
import { HERALD_BIN, spawnHerald, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

/**
 * Issue 32, point 6: every model call stores its input, cached input and output tokens and its cost
 * from the price table (HERALD_PRICES_FILE, then the built-in prices; 0 and marked unknown
 * otherwise); GET /v1/usage groups them; money budgets per person and profile refuse like the
 * limits (429 limit_exceeded, limit "budget", Retry-After; one line in a chat), after exactly one
 * warning at 80%.
 */

const SECRET = 'usage-test_1';
// gpt-test: $2 input, $0.50 cached input, $8 output per million tokens.
const PRICES = 'openai:\n  gpt-test: { input: 2, cached_input: 0.5, output: 8 }\n';
/** 250 in, 1,000 out: $0.0085, 85% of a one-cent budget. */
const EIGHTY_FIVE = { inputTokens: 250, outputTokens: 1000 };
/** 500 in, 125 out: $0.002. */
const TWO_TENTHS = { inputTokens: 500, outputTokens: 125 };
const DAY_MS = 86_400_000;
const exec = promisify(execFile);
const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);

describe('usage and cost', () => {
  let openai: FakeLLM;
  let anthropic: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    telegram = await startFakeTelegram();
    dir = mkdtempSync(join(tmpdir(), 'herald-prices-'));
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'prices.yaml'), PRICES);
    stack = await startStack({
      model: openai,
      env: {
        ...openChatsEnv(SECRET, telegram),
        HERALD_PRICES_FILE: join(dir, 'prices.yaml'),
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: 'sk-ant-test',
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await anthropic?.close();
    await telegram?.close();
  });

  const send = async (user: string, chat: string, text: string, profile?: string) => {
    const sent = await stack.post('/v1/messages?wait=30', { chat_id: chat, user_id: user, text, ...(profile ? { profile } : {}) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    return sent.body as { session_id: string; event_id: string; reply: { text: string }; budget_warnings?: string[] };
  };
  const callsOf = async (sessionId: string) =>
    (
      await sql<{
        provider: string;
        model: string;
        input_tokens: number;
        cached_input_tokens: number;
        output_tokens: number;
        cost_usd: string;
        price_known: boolean;
        user_id: string;
        profile_id: string;
      }>`
        SELECT provider, model, input_tokens, cached_input_tokens, output_tokens, cost_usd, price_known, user_id, profile_id
        FROM model_calls WHERE session_id = ${sessionId}::uuid ORDER BY id`.execute(stack.database.db)
    ).rows;

  it('prices a call from the usage OpenAI reports, cached input (prompt_tokens_details.cached_tokens) included', async () => {
    openai.script({ text: 'priced', usage: { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500 } });
    const sent = await send('ana', 'priced', 'what does this cost?');
    // 600 plain at $2, 400 cached at $0.50, 500 out at $8 per million: $0.0054.
    expect(await callsOf(sent.session_id)).toEqual([
      { provider: 'openai', model: 'gpt-test', input_tokens: 1000, cached_input_tokens: 400, output_tokens: 500, cost_usd: '0.005400000', price_known: true, user_id: 'api:ana', profile_id: 'main' },
    ]);
    expect(metricValue((await metricsText()).text, 'herald_model_cost_usd_total', { provider: 'openai', model: 'gpt-test' })).toBeCloseTo(0.0054, 6);
  });

  it('prices Anthropic from the built-in table (cache_read_input_tokens as cached), and an unknown model at 0, marked unknown', async () => {
    for (const [name, model] of [
      ['lab', 'anthropic/claude-sonnet-4-5'],
      ['mystery', 'anthropic/claude-test'],
    ] as const) {
      expect((await stack.post('/v1/profiles', { name })).status).toBe(201);
      expect((await stack.patch(`/v1/profiles/${name}`, { model: { primary: model } })).status).toBe(200);
    }
    anthropic.script({ text: 'sonnet', usage: { inputTokens: 2000, cachedInputTokens: 1500, outputTokens: 100 } });
    const lab = await send('ana', 'lab-chat', 'hello sonnet', 'lab');
    // 500 plain at $3, 1,500 read from the cache at $0.30, 100 out at $15 per million: $0.00345.
    expect(await callsOf(lab.session_id)).toMatchObject([
      { provider: 'anthropic', model: 'claude-sonnet-4-5', input_tokens: 2000, cached_input_tokens: 1500, cost_usd: '0.003450000', price_known: true, profile_id: 'lab' },
    ]);
    anthropic.script({ text: 'who knows', usage: { inputTokens: 3000, outputTokens: 300 } });
    const mystery = await send('ana', 'mystery-chat', 'hello stranger', 'mystery');
    expect(await callsOf(mystery.session_id)).toMatchObject([{ model: 'claude-test', input_tokens: 3000, cost_usd: '0.000000000', price_known: false }]);
  });

  it('GET /v1/usage groups by person, profile, model and day within the range, and refuses bad queries naming the field', async () => {
    const byModel = await stack.get('/v1/usage?group_by=model');
    expect(byModel.status).toBe(200);
    expect(byModel.body).toMatchObject({ group_by: ['model'], currency: 'USD' });
    const models = Object.fromEntries(byModel.body.rows.map((row: { model: string }) => [row.model, row]));
    expect(models['openai/gpt-test']).toMatchObject({ calls: 1, input_tokens: 1000, cached_input_tokens: 400, output_tokens: 500, cost_usd: 0.0054, unknown_price_calls: 0 });
    expect(models['anthropic/claude-sonnet-4-5']).toMatchObject({ calls: 1, cost_usd: 0.00345 });
    expect(models['anthropic/claude-test']).toMatchObject({ calls: 1, cost_usd: 0, unknown_price_calls: 1 });
    expect(byModel.body.total).toMatchObject({ calls: 3, cost_usd: 0.00885, unknown_price_calls: 1 });

    // A call of sixty days ago, someone else's.
    expect(await callsOf((await send('old', 'old-chat', 'hi')).session_id)).toHaveLength(1);
    const old = Date.now() - 60 * DAY_MS;
    await sql`UPDATE model_calls SET created_at = ${new Date(old)}, cost_usd = 1.5, price_known = true WHERE user_id = 'api:old'`.execute(stack.database.db);

    const byPerson = await stack.get('/v1/usage?group_by=person');
    expect(byPerson.body.rows.map((row: { person: string }) => row.person)).toEqual(['api:ana']);
    expect(byPerson.body.rows[0]).toMatchObject({ calls: 3, cost_usd: 0.00885 });
    const then = await stack.get(`/v1/usage?group_by=person,profile&from=${dayOf(old - DAY_MS)}&to=${dayOf(old)}`);
    expect(then.body).toMatchObject({ from: `${dayOf(old - DAY_MS)}T00:00:00.000Z`, to: `${dayOf(old + DAY_MS)}T00:00:00.000Z` });
    expect(then.body.rows).toEqual([
      { person: 'api:old', profile: 'main', calls: 1, input_tokens: expect.any(Number), cached_input_tokens: 0, output_tokens: expect.any(Number), cost_usd: 1.5, unknown_price_calls: 0 },
    ]);
    expect((await stack.get(`/v1/usage?group_by=day&from=${dayOf(old - 9 * DAY_MS)}&to=${dayOf(old - DAY_MS)}`)).body.rows).toEqual([]);
    const byDay = await stack.get(`/v1/usage?group_by=day,profile&from=${new Date(old - DAY_MS).toISOString()}`);
    const today = dayOf(Date.now());
    expect(byDay.body.rows.map((row: { day: string; profile: string }) => `${row.day} ${row.profile}`)).toEqual([`${dayOf(old)} main`, `${today} lab`, `${today} main`, `${today} mystery`]);
    expect((await stack.get('/v1/usage')).body).toMatchObject({ group_by: ['day'] });
    // Empty parameters are the defaults.
    const empty = await stack.get('/v1/usage?group_by=person&from=&to=');
    expect(empty.status).toBe(200);
    expect(empty.body.rows).toEqual(byPerson.body.rows);

    for (const [query, field] of [
      ['group_by=team', 'group_by'],
      ['group_by=day&from=yesterday', 'from'],
      ['to=2026-13-01', 'to'],
      ['from=2026-12-05&to=2026-12-01', 'to'],
      ['group_by=day&person=api:ana', 'person'],
    ] as const) {
      const refused = await stack.get(`/v1/usage?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.field, query).toBe(field);
    }
  });

  it("API: warns once at 80% of a person's daily budget, then refuses with 429 limit_exceeded, limit budget and Retry-After", async () => {
    expect((await stack.put('/v1/budgets/person/api:bob', { per_day: 0.01 })).body).toMatchObject({ scope: 'person', subject: 'api:bob', per_day: 0.01, per_month: null });
    openai.script({ text: 'first', usage: EIGHTY_FIVE }, { text: 'second', usage: TWO_TENTHS });
    const first = await send('bob', 'bob-1', 'one');
    expect(first.budget_warnings).toEqual(['Heads-up: your model budget for today is 85% spent ($0.0085 of $0.01).']);
    const second = await send('bob', 'bob-2', 'two');
    expect(second.reply.text).toBe('second');
    expect(second.budget_warnings).toBeUndefined();
    // The event view shows the warning on the turn that gave it.
    expect((await stack.get(`/v1/events/${first.event_id}`)).body.budget_warnings).toHaveLength(1);

    const response = await fetch(`${stack.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.env.HERALD_API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'bob-3', user_id: 'bob', text: 'three' }),
    });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    const body = (await response.json()) as { error: { code: string; limit: string; message: string } };
    expect(body.error).toEqual({
      code: 'limit_exceeded',
      limit: 'budget',
      message: expect.stringMatching(/^Not taken: You have spent today's model budget for one person; it renews at midnight UTC, in .+\.$/),
    });
    const warnings = await sql<{ n: string }>`SELECT count(*) AS n FROM budget_warnings WHERE user_id = 'api:bob'`.execute(stack.database.db);
    expect(Number(warnings.rows[0]?.n)).toBe(1);
    const audited = await sql<{ subject: string }>`SELECT subject FROM audit_log WHERE kind = 'refusal' AND actor = 'api:bob'`.execute(stack.database.db);
    expect(audited.rows.map((row) => row.subject)).toEqual(['limit:budget:person:day']);
    // Someone else goes on.
    expect((await send('carol', 'carol-1', 'hi')).reply.text).toBe('echo: hi');
  });

  it("a profile's monthly budget refuses everyone in that profile, and the budget can be lifted", async () => {
    expect((await stack.post('/v1/profiles', { name: 'capped' })).status).toBe(201);
    expect((await stack.put('/v1/budgets/profile/capped', { per_month: 0.005 })).status).toBe(200);
    openai.script({ text: 'spent', usage: EIGHTY_FIVE });
    const spent = await send('dana', 'capped-1', 'spend it', 'capped');
    expect(spent.budget_warnings).toEqual(["Heads-up: this agent's (capped) model budget for this month is 170% spent ($0.0085 of $0.005)."]);
    const refused = await stack.post('/v1/messages', { chat_id: 'capped-2', user_id: 'erin', text: 'me too', profile: 'capped' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'limit_exceeded', limit: 'budget' });
    expect(refused.body.error.message).toMatch(/This agent has spent this month's model budget; it renews on the 1st \(UTC\)/);
    const listed = await stack.get('/v1/budgets');
    expect(listed.body).toMatchObject({ defaults: { person_day: 0, person_month: 0, profile_day: 0, profile_month: 0 } });
    expect(listed.body.budgets.map((budget: { subject: string }) => budget.subject)).toEqual(['api:bob', 'capped']);
    expect((await stack.delete('/v1/budgets/profile/capped')).status).toBe(204);
    expect((await stack.delete('/v1/budgets/profile/capped')).status).toBe(404);
    expect((await send('erin', 'capped-2', 'me too', 'capped')).reply.text).toBe('echo: me too');
    for (const [path, body, field] of [
      ['/v1/budgets/team/x', { per_day: 1 }, 'scope'],
      ['/v1/budgets/profile/Not%20A%20Profile', { per_day: 1 }, 'subject'],
      ['/v1/budgets/person/api:bob', { per_day: -1 }, 'per_day'],
      ['/v1/budgets/person/api:bob', { per_week: 1 }, 'per_week'],
    ] as const) {
      const response = await stack.put(path, body);
      expect(response.status, path).toBe(400);
      expect(response.body.error.field, path).toBe(field);
    }
  });

  it('Telegram: one warning line at 80%, then one line refusing the next message; /usage shows today and this month', async () => {
    const person = { id: 7801, username: 'frugal' };
    expect((await stack.put('/v1/budgets/person/telegram:7801', { per_day: 0.01 })).status).toBe(200);
    openai.script({ text: 'first answer', usage: EIGHTY_FIVE }, { text: 'second answer', usage: TWO_TENTHS });
    const say = async (text: string, count: number) => {
      expect((await stack.post('/telegram/webhook', telegram.userMessage({ chatId: person.id, from: person, text }), { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
      return waitFor(async () => (telegram.botMessages(person.id).length >= count ? telegram.botMessages(person.id).map((message) => message.text) : undefined), { what: `${count} bot messages` });
    };
    expect(await say('one', 2)).toEqual(['first answer', 'Heads-up: your model budget for today is 85% spent ($0.0085 of $0.01).']);
    expect((await say('two', 3))[2]).toBe('second answer');
    const texts = await say('three', 4);
    expect(texts[3]).toMatch(/^Not taken: You have spent today's model budget for one person; it renews at midnight UTC, in .+\.$/);
    expect(texts[3]?.split('\n')).toHaveLength(1);
    const usage = (await say('/usage', 5))[4] ?? '';
    const spent = formatUsd(0.0105);
    expect(usage.split('\n')).toEqual([
      `Today (UTC): ${spent}, 2 model calls, 750 in (0 cached), 1,125 out tokens.`,
      `This month: ${spent}, 2 model calls, 750 in (0 cached), 1,125 out tokens.`,
      `Your budget for today: ${spent} of $0.01 spent.`,
    ]);
    expect(telegram.botMessages(person.id).filter((message) => message.text.startsWith('Heads-up'))).toHaveLength(1);
  });

  it("/usage through the API shows the person's own usage only, with unpriced calls said", async () => {
    const reply = (await send('ana', 'usage-chat', '/usage')).reply.text;
    expect(reply.split('\n')[0]).toBe(`Today (UTC): ${formatUsd(0.00885)}, 3 model calls, 6,000 in (1,900 cached), 900 out tokens (1 call of models without a price).`);
  });

  it('herald usage and herald budgets: the same grouping and budgets through the API', async () => {
    const env = { ...process.env, ...stack.env, HERALD_URL: stack.url };
    const { stdout } = await exec(process.execPath, [HERALD_BIN, 'usage', '--group-by', 'model'], { env });
    expect(stdout).toMatch(/^model +calls +input +cached +output +cost \(USD\) +unpriced$/m);
    expect(stdout).toMatch(/^openai\/gpt-test +\d+ +[\d,]+ +400 +[\d,]+ +\$0\.\d{4}$/m);
    expect(stdout).toMatch(/^anthropic\/claude-test +1 +3,000 +0 +300 +\$0\.00 +1$/m);
    const json = JSON.parse((await exec(process.execPath, [HERALD_BIN, 'usage', '--group-by', 'person,day', '--json'], { env })).stdout);
    expect(json.group_by).toEqual(['person', 'day']);
    await exec(process.execPath, [HERALD_BIN, 'budgets', 'set', 'person', 'api:gus', '--day', '3', '--month', '40'], { env });
    expect((await exec(process.execPath, [HERALD_BIN, 'budgets'], { env })).stdout).toMatch(/^person +api:gus +\$3\.00 +\$40\.00$/m);
    const bad = await exec(process.execPath, [HERALD_BIN, 'budgets', 'set', 'team', 'x', '--day', '3'], { env }).catch((error: { code: number; stderr: string }) => error);
    expect(bad).toMatchObject({ code: 2 });
  });

  it('refuses to start a worker with a bad price file, naming the file and the field', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'openai:\n  gpt-test: { input: 2, output: "eight" }\n');
    const worker = spawnHerald('worker', { ...stack.env, HERALD_PRICES_FILE: join(dir, 'bad.yaml') });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain(`herald: invalid configuration: HERALD_PRICES_FILE (${join(dir, 'bad.yaml')}): openai.gpt-test.output: expected a number of dollars per million tokens`);
  });
});
