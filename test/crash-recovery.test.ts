import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_RESULT } from '@herald/agent';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { countToolCalls } from './support/test-tools.ts';

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('a worker killed with SIGKILL mid-turn', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;

  /** Kills the worker process that holds the session's lease, and starts another in its place. */
  const killHolder = async (sessionId: string) => {
    const lease = await stack.database.db.selectFrom('session_leases').select('owner').where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    const pid = Number(lease.owner.split(':')[1]);
    const victim = stack.processes().find((worker) => worker.child.pid === pid);
    if (!victim) throw new Error(`no worker with pid ${pid}`);
    await stopProcess(victim, 'SIGKILL');
    await stack.startProcess('worker');
  };

  const toolCalls = (tool: string, label: string) => countToolCalls(stack.database.db, { tool, label });
  const toolStarted = (tool: string, label: string) => waitFor(async () => (await toolCalls(tool, label)) === 1, { what: `${tool} started` });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, workerProcesses: true, testTools: true, env: { HERALD_LEASE_TTL_MS: '1500' } });
    await Promise.all([stack.startProcess('worker'), stack.startProcess('worker')]);
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  /** Calls the tool on the person's message (the first call sleeps until killed), then reports its result. */
  const toolThenReport = (tool: string, label: string) => (request: { messages: { role: string; content: string }[] }) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'user') return { toolCalls: [{ name: tool, arguments: { label, first_sleep_ms: 60_000 } }] };
    return { text: `tool said: ${last?.content ?? ''}` };
  };

  it('does not re-run an unsafe tool: the model is told the outcome is unknown', async () => {
    fake.handler = toolThenReport('send_payment', 'p1');
    const sent = await stack.post('/v1/messages', { chat_id: 'crash-unsafe', user_id: 'u1', text: 'pay the invoice' });
    await toolStarted('send_payment', 'p1');
    await killHolder(sent.body.session_id);
    const event = await stack.waitForEvent(sent.body.event_id, 30_000);
    expect(event.reply.text).toBe(`tool said: ${INTERRUPTED_RESULT}`);
    expect(await toolCalls('send_payment', 'p1')).toBe(1);
    const turn = await stack.database.db.selectFrom('turns').selectAll().where('session_id', '=', sent.body.session_id).executeTakeFirstOrThrow();
    expect(turn.attempts).toBe(2);
    const roles = (await stack.get(`/v1/sessions/${sent.body.session_id}/messages`)).body.messages.map((m: any) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('re-runs a tool that declares itself safe to replay', async () => {
    // The first call sleeps until its worker is killed; the replay on the next worker answers at once.
    fake.handler = toolThenReport('slow_lookup', 'l1');
    const sent = await stack.post('/v1/messages', { chat_id: 'crash-safe', user_id: 'u1', text: 'look it up' });
    await toolStarted('slow_lookup', 'l1');
    await killHolder(sent.body.session_id);
    const event = await stack.waitForEvent(sent.body.event_id, 45_000);
    expect(event.reply.text).toBe('tool said: found l1');
    expect(await toolCalls('slow_lookup', 'l1')).toBe(2);
  });

  it('gives up with an error reply when the attempt budget is spent, and the session stays usable', async () => {
    fake.handler = (request) => (request.lastUserText === 'doomed' ? { hang: true } : { text: `ok: ${request.lastUserText}` });
    const sent = await stack.post('/v1/messages', { chat_id: 'crash-budget', user_id: 'u1', text: 'doomed' });
    await fake.waitForCalls(sent.body.session_id);
    // As if it had already been resumed twice before this crash.
    await stack.database.db.updateTable('turns').set({ attempts: 3 }).where('session_id', '=', sent.body.session_id).execute();
    await killHolder(sent.body.session_id);
    const event = await stack.waitForEvent(sent.body.event_id, 30_000);
    expect(event.reply.text).toMatch(/interrupted 3 times/);
    const next = await stack.post('/v1/messages?wait=20', { chat_id: 'crash-budget', user_id: 'u1', text: 'hello again' });
    expect(next.body.reply.text).toBe('ok: hello again');
  });
});
