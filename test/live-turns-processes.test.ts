import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { PROCESS_START_MS, spawnHerald, startStack, stopProcess, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
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

describe('a live turn followed from a second ingress replica', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  let replica: HeraldProcess;
  let replicaUrl: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake });
    // A second `herald ingress` process on the same database and queue: its own notice subscriptions and stream reads.
    replica = spawnHerald('ingress', { ...stack.env, LOG_LEVEL: 'info' });
    const listening = await waitFor(async () => /ingress listening on (\S+)"/.exec(replica.output())?.[1], { timeoutMs: PROCESS_START_MS, what: 'the second ingress' });
    replicaUrl = listening.replace('0.0.0.0', '127.0.0.1');
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    if (replica) await stopProcess(replica);
    await stack.stop();
  });

  const followFromReplica = (eventId: string, lastEventId?: string) =>
    fetch(`${replicaUrl}/v1/events/${eventId}/stream`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });

  it('follows, live, a turn the first replica accepted, and resumes there a stream begun on the first', async () => {
    expect(new URL(replicaUrl).port).not.toBe(new URL(stack.url).port);
    fake.handler = () => ({ text: LONG, chunkDelayMs: 40 });
    const accepted = await stack.post('/v1/messages', { chat_id: 'two-replicas', user_id: 'u1', text: 'what now?' });
    expect(accepted.status).toBe(202);
    const events = await collectSse(await followFromReplica(accepted.body.event_id));
    expect(events.at(-1)?.event).toBe('done');
    expect(json(events.at(-1)!).reply.text).toBe(LONG);
    expect(deltas(events).join('')).toBe(LONG);
    // Shown as it was written, not replayed once it ended: the text came over the ~1 s the model took.
    expect(deltas(events).length).toBeGreaterThan(3);
    expect(events.at(-1)!.at - events.find((e) => e.event === 'delta')!.at).toBeGreaterThan(400);

    // A stream opened on the first replica, dropped, and resumed on the second without gaps or repeats.
    const response = await streamRequest(stack, { chat_id: 'two-replicas', user_id: 'u1', text: 'and then?' });
    const eventId = response.headers.get('x-herald-event-id')!;
    const first: SseEvent[] = [];
    const reader = readSse(response);
    await readUntil(reader, first, () => deltas(first).length === 3);
    await reader.return(undefined);
    const rest = await collectSse(await followFromReplica(eventId, first.at(-1)!.id));
    expect(rest.at(-1)?.event).toBe('done');
    expect([...deltas(first), ...deltas(rest)].join('')).toBe(LONG);
  });
});
