import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { collectSse, readSse, readUntil } from './support/sse-client.ts';
import type { SseEvent } from './support/sse-client.ts';

const json = (event: SseEvent) => JSON.parse(event.data) as any;
const deltas = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => json(e).text as string);
const LONG = 'Step one: drain the node. Step two: cordon it. Step three: roll the deployment back to the last green build and watch the error rate.';

function streamRequest(stack: Stack, body: unknown): Promise<Response> {
  return fetch(`${stack.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
}

describe('a live turn whose worker is SIGKILLed mid-stream', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, workerProcesses: true, env: { HERALD_LEASE_TTL_MS: '1500' } });
    await stack.startProcess('worker');
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  it('finishes on another worker, and the same stream follows it without repeats', async () => {
    fake.handler = () => ({ text: LONG, chunkDelayMs: 80 });
    const response = await streamRequest(stack, { chat_id: 'kill-stream', user_id: 'u1', text: 'what now?' });
    const sessionId = response.headers.get('x-herald-session-id')!;
    const events: SseEvent[] = [];
    const reader = readSse(response);
    await readUntil(reader, events, () => deltas(events).length === 3);
    const lease = await stack.database.db.selectFrom('session_leases').select('owner').where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    const victim = stack.processes().find((worker) => worker.child.pid === Number(lease.owner.split(':')[1]))!;
    await stopProcess(victim, 'SIGKILL');
    // The second worker streams the step again from its start: the follower shows only what is new.
    fake.handler = () => ({ text: LONG, chunkDelayMs: 5 });
    await stack.startProcess('worker');
    await readUntil(reader, events, (event) => event.event === 'done' || event.event === 'error');
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(json(done).reply.text).toBe(LONG);
    expect(deltas(events).join('')).toBe(LONG);
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
  });
});

function approvalThenReport(request: FakeRequest): FakeReply {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `done: ${last.content}` };
  return { toolCalls: [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }] };
}

describe('a live turn that waits on the person', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, testTools: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('says what it waits on, and goes on to the reply once the person approves', async () => {
    fake.handler = approvalThenReport;
    const response = await streamRequest(stack, { chat_id: 'wait-stream', user_id: 'u1', text: 'pay the rent' });
    const events: SseEvent[] = [];
    const reader = readSse(response);
    await readUntil(reader, events, (event) => event.event === 'waiting');
    const waiting = json(events.at(-1)!);
    expect(waiting).toMatchObject({ kind: 'approval', tool: 'wire_transfer', prompt: 'transfer 900 (rent)' });
    expect(events.filter((e) => e.event === 'tool').map(json)).toEqual([{ name: 'wire_transfer', status: 'start' }]);
    const approved = await stack.post(`/v1/waits/${waiting.id}`, { decision: 'approve', user_id: 'u1' });
    expect(approved.status).toBe(200);
    await readUntil(reader, events, (event) => event.event === 'done');
    expect(json(events.at(-1)!).reply.text).toBe('done: transferred 900 for rent');
    expect(deltas(events).join('')).toBe('done: transferred 900 for rent');
  });

  it("refuses a bad request with a 4xx before any stream, and streams a chat command's answer as deltas ending in done", async () => {
    const bad = await streamRequest(stack, { chat_id: 'x', user_id: 'u1', text: '' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/json/);
    const events = await collectSse(await streamRequest(stack, { chat_id: 'cmd-stream', user_id: 'u1', text: '/status' }));
    expect(events.at(-1)?.event).toBe('done');
    expect(deltas(events).join('')).toBe(json(events.at(-1)!).reply.text);
  });
});
