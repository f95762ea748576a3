import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import type { FakeReply, FakeRequest } from '../test/support/fake-llm.ts';
import { startStack } from '../test/support/stack.ts';
import type { Stack } from '../test/support/stack.ts';
import { writeHooks } from '../test/support/hook-fixtures.ts';
import { percentile } from './machine.ts';

export interface HooksBenchRow {
  variant: string;
  turns: number;
  p50: number;
  p99: number;
  mean: number;
}

// Two no-op hooks on each event a tool-using turn fires (pre_llm_call once per turn, post_llm_call
// per model call, and the three tool events): ten hooks, each returning nothing.
const EVENTS = ['pre_llm_call', 'post_llm_call', 'pre_tool_call', 'transform_tool_result', 'post_tool_call'];
const NOOP = 'export default function register(ctx) { for (const e of EVENTS) ctx.on(e, () => undefined); }';

function tenNoOpHooks(): string {
  const lines = EVENTS.flatMap((event) => [1, 2].map((n) => `  - { name: noop-${event}-${n}, event: ${event}, module: ./noop.mjs }`));
  return writeHooks({ 'noop.mjs': `const EVENTS = ${JSON.stringify(EVENTS)};\n${NOOP}` }, `hooks:\n${lines.join('\n')}\n`);
}

/** One tool call, then the answer: two model calls and one tool call per turn. */
function oneToolTurn(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: 'done' };
  return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'bench' } }] };
}

/**
 * The cost of ten no-op module hooks per turn against none, in the same run: two stacks side by
 * side (same machine, same fake model), turns sent alternately to each, client-measured latency of
 * POST /v1/messages?wait from accept to reply. "none" still has the hook machinery with no hooks
 * (the per-turn lookup of the profile's hooks and the audit entry of each tool call).
 */
export async function runHooksBench(turns: number, progress: (message: string) => void): Promise<HooksBenchRow[]> {
  const fake = await startFakeOpenAI();
  fake.handler = oneToolTurn;
  const stacks: [string, Stack][] = [];
  try {
    progress('hooks: starting two stacks (no hooks, ten no-op module hooks)');
    stacks.push(['no hooks', await startStack({ testTools: true, env: { OPENAI_BASE_URL: fake.url, HERALD_MODEL: 'openai/gpt-test', OPENAI_API_KEY: 'sk-test' } })]);
    stacks.push([
      'ten no-op module hooks',
      await startStack({ testTools: true, env: { OPENAI_BASE_URL: fake.url, HERALD_MODEL: 'openai/gpt-test', OPENAI_API_KEY: 'sk-test', HERALD_HOOKS_FILE: tenNoOpHooks() } }),
    ]);
    const samples = new Map<string, number[]>(stacks.map(([name]) => [name, []]));
    for (let i = 0; i < turns + 5; i++) {
      for (const [name, stack] of stacks) {
        const started = performance.now();
        const response = await stack.post('/v1/messages?wait=30', { chat_id: `bench-${i % 8}`, user_id: 'u', text: `turn ${i}` });
        if (response.status !== 200) throw new Error(`${name}: turn answered ${response.status}`);
        // The first turns warm the JIT, the pools and the sessions' prompts: not counted.
        if (i >= 5) samples.get(name)?.push(performance.now() - started);
      }
    }
    return stacks.map(([name]) => {
      const values = samples.get(name) ?? [];
      return { variant: name, turns: values.length, p50: percentile(values, 50), p99: percentile(values, 99), mean: values.reduce((a, b) => a + b, 0) / values.length };
    });
  } finally {
    for (const [, stack] of stacks) await stack.stop();
    await fake.close();
  }
}
