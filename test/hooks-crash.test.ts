import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { countToolCalls } from './support/test-tools.ts';
import { writeHooks } from './support/hook-fixtures.ts';

// The hook runs inside the worker processes: it appends each firing to a file next to itself.
const RECORDER = `
  import { appendFileSync } from 'node:fs';
  export default function register(ctx) {
    ctx.on('pre_tool_call', (event) => {
      appendFileSync(new URL('./fired.log', import.meta.url), event.tool_call_id + ' ' + event.tool_name + '\\n');
    });
  }`;

describe('pre_tool_call across a worker killed mid-turn', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  let firedLog: string;

  const fired = () => {
    try {
      return readFileSync(firedLog, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
    } catch {
      return [];
    }
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const file = writeHooks({ 'recorder.mjs': RECORDER }, 'hooks:\n  - { name: recorder, event: pre_tool_call, module: ./recorder.mjs }\n');
    firedLog = join(dirname(file), 'fired.log');
    stack = await startStack({ model: fake, workerProcesses: true, testTools: true, env: { HERALD_LEASE_TTL_MS: '1500', HERALD_HOOKS_FILE: file } });
    await Promise.all([stack.startProcess('worker'), stack.startProcess('worker')]);
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  it('fires pre_tool_call once per tool call when a resumed turn runs the call again', async () => {
    // slow_lookup is safe to replay: the resumed turn runs it again, but must not ask the hooks again.
    fake.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user') return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'k1', first_sleep_ms: 60_000 } }] };
      return { text: `tool said: ${last?.content ?? ''}` };
    };
    const sent = await stack.post('/v1/messages', { chat_id: 'hooks-crash', user_id: 'u1', text: 'look it up' });
    await waitFor(async () => (await countToolCalls(stack.database.db, { tool: 'slow_lookup', label: 'k1' })) === 1, { what: 'slow_lookup started' });
    expect(fired()).toHaveLength(1);
    const lease = await stack.database.db.selectFrom('session_leases').select('owner').where('session_id', '=', sent.body.session_id).executeTakeFirstOrThrow();
    const victim = stack.processes().find((worker) => worker.child.pid === Number(lease.owner.split(':')[1]));
    if (!victim) throw new Error('no worker holds the lease');
    await stopProcess(victim, 'SIGKILL');
    await stack.startProcess('worker');
    const event = await stack.waitForEvent(sent.body.event_id, 45_000);
    expect(event.reply.text).toBe('tool said: found k1');
    expect(await countToolCalls(stack.database.db, { tool: 'slow_lookup', label: 'k1' })).toBe(2);
    const lines = fired();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ slow_lookup$/);
    const firings = await stack.database.db.selectFrom('hook_firings').selectAll().where('event', '=', 'pre_tool_call').execute();
    expect(firings).toHaveLength(1);
  });
});
