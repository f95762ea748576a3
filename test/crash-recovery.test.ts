import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { INTERRUPTED_RESULT } from '@herald/agent';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStack, startWorkerProcess, TEST_TOOLS_PLUGIN, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';

describe('a worker killed with SIGKILL mid-turn', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let workers: HeraldProcess[] = [];

  const spawnWorker = async () => {
    const worker = await startWorkerProcess(stack.env);
    workers.push(worker);
    return worker;
  };

  /** Kills the worker process that holds the session's lease. */
  const killHolder = async (sessionId: string) => {
    const lease = await stack.database.db
      .selectFrom('session_leases')
      .select('owner')
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    const pid = Number(lease.owner.split(':')[1]);
    const victim = workers.find((w) => w.child.pid === pid);
    if (!victim) throw new Error(`no worker with pid ${pid}`);
    victim.child.kill('SIGKILL');
    await victim.exited;
    workers = workers.filter((w) => w !== victim);
    await spawnWorker();
  };

  const toolCalls = async (tool: string, label: string) => {
    const rows = await sql<{ count: string }>`SELECT count(*) FROM test_tool_calls WHERE tool = ${tool} AND label = ${label}`.execute(
      stack.database.db,
    );
    return Number(rows.rows[0]?.count);
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({
      workers: 0,
      scheduler: true,
      env: {
        HERALD_MODEL: 'openai/gpt-test',
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: 'sk-test',
        HERALD_TOOL_PLUGINS: TEST_TOOLS_PLUGIN,
        HERALD_LEASE_TTL_MS: '1500',
        HERALD_RECONCILE_INTERVAL_MS: '300',
      },
    });
    await spawnWorker();
    await spawnWorker();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await stack.stop();
    await fake.close();
  });

  const toolThenEcho = (tool: string, label: string) => (request: { messages: { role: string; content: string }[] }) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'user') return { toolCalls: [{ name: tool, arguments: { label, sleep_ms: 20_000 } }] };
    return { text: `tool said: ${last?.content ?? ''}` };
  };

  it('does not re-run an unsafe tool: the model is told the outcome is unknown', async () => {
    fake.handler = toolThenEcho('send_payment', 'p1');
    const sent = await stack.post('/v1/messages', { chat_id: 'crash-unsafe', user_id: 'u1', text: 'pay the invoice' });
    await waitFor(async () => (await toolCalls('send_payment', 'p1').catch(() => 0)) === 1, { what: 'tool started' });
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
    fake.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      // Long enough to kill the worker mid-call; the replay on the next worker sleeps as long.
      if (last?.role === 'user') return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'l1', sleep_ms: 3000 } }] };
      return { text: `tool said: ${last?.content ?? ''}` };
    };
    const sent = await stack.post('/v1/messages', { chat_id: 'crash-safe', user_id: 'u1', text: 'look it up' });
    await waitFor(async () => (await toolCalls('slow_lookup', 'l1').catch(() => 0)) === 1, { what: 'tool started' });
    await killHolder(sent.body.session_id);
    const event = await stack.waitForEvent(sent.body.event_id, 45_000);
    expect(event.reply.text).toBe('tool said: found l1');
    expect(await toolCalls('slow_lookup', 'l1')).toBe(2);
  });

  it('gives up with an error reply when the attempt budget is spent, and the session stays usable', async () => {
    fake.handler = (request) => (request.lastUserText === 'doomed' ? { hang: true } : { text: `ok: ${request.lastUserText}` });
    const sent = await stack.post('/v1/messages', { chat_id: 'crash-budget', user_id: 'u1', text: 'doomed' });
    await waitFor(async () => fake.requests.some((r) => r.sessionKey === sent.body.session_id), { what: 'model call' });
    // As if it had already been resumed twice before this crash.
    await stack.database.db.updateTable('turns').set({ attempts: 3 }).where('session_id', '=', sent.body.session_id).execute();
    await killHolder(sent.body.session_id);
    const event = await stack.waitForEvent(sent.body.event_id, 30_000);
    expect(event.reply.text).toMatch(/interrupted 3 times/);
    const next = await stack.post('/v1/messages?wait=20', { chat_id: 'crash-budget', user_id: 'u1', text: 'hello again' });
    expect(next.body.reply.text).toBe('ok: hello again');
  });
});
