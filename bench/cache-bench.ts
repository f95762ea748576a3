import { sql } from 'kysely';
import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import type { FakeRequest } from '../test/support/fake-llm.ts';
import { startStack } from '../test/support/stack.ts';

export interface CacheShare {
  variant: string;
  calls: number;
  inputTokens: number;
  cachedTokens: number;
  distinctPrefixes: number;
}

const IDENTITY = `You are Herald, the bench team's assistant. ${'Answer carefully and cite what you used. '.repeat(150)}`;

/**
 * A 20-turn session with memory writes at turns 5 and 12 on two workers, answered by the fake
 * OpenAI server, which accounts cached prefix tokens the way the provider does. The naive variant
 * clears the stored prompt before every turn, so each turn rebuilds it from live memory.
 */
export async function measureCacheShare(naive: boolean): Promise<CacheShare> {
  const fake = await startFakeOpenAI();
  const stack = await startStack({
    workers: 2,
    env: { HERALD_MODEL: 'openai/bench', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-bench' },
  });
  try {
    await stack.patch('/v1/profiles/main', { identity: IDENTITY });
    fake.handler = (request: FakeRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user' && (last.content === 'turn 5' || last.content === 'turn 12')) {
        return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'user', content: `Fact learned at ${last.content}` } }] };
      }
      return { text: `Answer to ${last?.content ?? ''}: ${'details '.repeat(40)}` };
    };
    let sessionId = '';
    for (let turn = 1; turn <= 20; turn++) {
      if (naive && sessionId !== '') {
        await sql`UPDATE sessions SET system_prompt = NULL WHERE id = ${sessionId}`.execute(stack.database.db);
      }
      const response = await stack.post('/v1/messages?wait=30', { chat_id: `cache-${naive}`, user_id: 'ada', text: `turn ${turn}` });
      if (response.status !== 200) throw new Error(`turn ${turn}: ${response.status}`);
      sessionId = response.body.session_id;
    }
    const totals = await sql<{ calls: string; input: string; cached: string }>`
      SELECT count(*) AS calls, sum(input_tokens) AS input, sum(cached_input_tokens) AS cached
      FROM model_calls WHERE session_id = ${sessionId}`.execute(stack.database.db);
    const row = totals.rows[0];
    const prefixes = new Set(fake.requests.filter((r) => r.sessionKey === sessionId).map((r) => JSON.stringify([(r.body as any).messages[0], (r.body as any).tools])));
    return {
      variant: naive ? 'naive: prompt rebuilt every turn' : 'Herald: prompt frozen per session',
      calls: Number(row?.calls),
      inputTokens: Number(row?.input),
      cachedTokens: Number(row?.cached),
      distinctPrefixes: prefixes.size,
    };
  } finally {
    await stack.stop();
    await fake.close();
  }
}
