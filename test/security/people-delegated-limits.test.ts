import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeHandler } from '../support/fake-llm.ts';
import { delegatingModel } from '../support/delegating-model.ts';
import type { DelegatingModel } from '../support/delegating-model.ts';
import { startStack } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Limits count delegated work (issue 39, point 5; docs/subagents.md, "Limits"): with 1 turn in
 * flight and 4 turns a minute per person, every delegate_task child is checked before it starts and
 * counts as one of the person's turns, so none runs past the limits and each refused child comes
 * back to the parent as a refusal (status 'refused'), not an error; and the daily token budget is
 * checked before every model call, so a turn that keeps calling the model stops at the budget.
 */

const TOKENS_PER_DAY = 20_000;

describe('limits count delegated work and every model call', () => {
  let fake: FakeLLM;
  let model: DelegatingModel;
  let stack: Stack;

  beforeAll(async () => {
    model = delegatingModel();
    fake = await startFakeOpenAI({ handler: model.handler });
    stack = await startStack({
      model: fake,
      env: { HERALD_LIMIT_CONCURRENT_TURNS: '1', HERALD_LIMIT_TURNS_PER_MINUTE: '4', HERALD_LIMIT_TOKENS_PER_DAY: String(TOKENS_PER_DAY) },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const ask = async (user: string, chat: string, text: string) => {
    const sent = await stack.post('/v1/messages', { chat_id: chat, user_id: user, text });
    expect(sent.status, text).toBe(202);
    return (await stack.waitForEvent(sent.body.event_id as string, 60_000)).reply.text as string;
  };
  const resultsOf = (reply: string) => (JSON.parse(reply.replace(/^parent got: /, '')) as { results: any[] }).results;
  const runsOf = async (user: string) =>
    (await sql<{ status: string; exit_reason: string }>`SELECT status, exit_reason FROM subagent_runs WHERE user_id = ${user} ORDER BY task_index`.execute(stack.database.db)).rows;
  const nine = { tasks: [1, 2, 3].map((n) => ({ goal: `count batch ${n}` })) };

  it('with 1 turn in flight, the parent holds it: every child is refused before it starts and reported as a refusal', async () => {
    const results = resultsOf(await ask('alice', 'delegating', `delegate: ${JSON.stringify(nine)}`));
    expect(results.map((r) => [r.task_index, r.status, r.exit_reason])).toEqual([
      [0, 'refused', 'refused'],
      [1, 'refused', 'refused'],
      [2, 'refused', 'refused'],
    ]);
    for (const result of results) expect(result.summary).toMatch(/as many requests in progress as this Herald allows one person/);
    expect(results[0]).toMatchObject({ api_calls: 0, tokens: { input: 0, output: 0 } });
    expect(model.childGoals).toEqual([]);
    expect(await runsOf('api:alice')).toEqual(Array(3).fill({ status: 'done', exit_reason: 'refused' }));
    // The children left nothing in flight: the person's next message is taken.
    expect(await ask('alice', 'delegating', 'still there?')).toBe('echo: still there?');
  });

  it("children count toward turns a minute: after three messages, the fourth one's children are refused by it", async () => {
    for (let i = 1; i <= 3; i++) expect(await ask('carol', `minute-${i}`, `hello ${i}`)).toBe(`echo: hello ${i}`);
    const results = resultsOf(await ask('carol', 'minute-4', `delegate: ${JSON.stringify({ goal: 'one more thing' })}`));
    expect(results).toEqual([expect.objectContaining({ status: 'refused', exit_reason: 'refused', summary: expect.stringMatching(/as many messages this minute/) })]);
    expect(model.childGoals).toEqual([]);
  });

  it('checks the token budget before every model call: a turn that keeps calling tools stops at the budget', async () => {
    const spinning: FakeHandler = (request) =>
      request.messages.at(-1)?.role === 'user' || request.messages.at(-1)?.role === 'tool'
        ? { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: `spin ${request.messages.length}`, status: 'in_progress' }] } }] }
        : { text: 'never' };
    fake.handler = spinning;
    const reply = await ask('dave', 'spinning', 'keep going');
    fake.handler = model.handler;
    expect(reply).toMatch(/today's model budget for one person; it renews at midnight UTC/);
    const usage = await sql<{ tokens: string; calls: string; biggest: string }>`
      SELECT (SELECT tokens FROM usage_days WHERE user_id = 'api:dave') AS tokens,
             count(*) AS calls, max(input_tokens + output_tokens) AS biggest
      FROM model_calls m JOIN sessions s ON s.id = m.session_id WHERE s.origin_user_id = 'api:dave'`.execute(stack.database.db);
    const row = usage.rows[0];
    // It went over by at most the one call that crossed the line, and stopped long before the iteration limit.
    expect(Number(row?.calls)).toBeGreaterThan(1);
    expect(Number(row?.tokens)).toBeGreaterThanOrEqual(TOKENS_PER_DAY);
    expect(Number(row?.tokens)).toBeLessThan(TOKENS_PER_DAY + Number(row?.biggest));
    const turn = await sql<{ status: string; error: string | null }>`
      SELECT t.status, t.error FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.origin_user_id = 'api:dave'`.execute(stack.database.db);
    expect(turn.rows).toEqual([{ status: 'failed', error: 'limited' }]);
  });
});
