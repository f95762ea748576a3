import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { assertNoOrphans, isSummaryRequest, longText, summariserThatKeeps } from './support/long-chat.ts';

const WINDOW = 16_000;

/** Chat turns answer at length; the reviewer's calls get a plain answer (it saves nothing). */
function chatModel(request: FakeRequest): FakeReply {
  if (isSummaryRequest(request)) return summariserThatKeeps(request, /codename/i);
  const turn = /turn (\d+)/.exec(request.lastUserText)?.[1] ?? '?';
  return { text: `answer ${turn}: ${longText('reply', 1600)}` };
}

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('compression across worker processes', { timeout: 4 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ contextTokens: WINDOW, handler: chatModel });
    stack = await startStack({ model: fake, workerProcesses: true, env: { HERALD_CONTEXT_TOKENS: String(WINDOW), HERALD_LEASE_TTL_MS: '1500' } });
    await Promise.all([stack.startProcess('worker'), stack.startProcess('worker'), stack.startProcess('reviewer')]);
    expect((await stack.patch('/v1/profiles/main', { memory_review_interval: 2, skill_review_interval: 0 })).status).toBe(200);
  }, 3 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  const childrenPerSession = async () => {
    const rows = await stack.database.db
      .selectFrom('sessions')
      .select(['parent_session_id', (eb) => eb.fn.countAll<string>().as('children')])
      .where('parent_session_id', 'is not', null)
      .groupBy('parent_session_id')
      .execute();
    return rows.map((row) => Number(row.children));
  };

  it('makes exactly one child per compressed session while two workers and a reviewer race on the chat', async () => {
    const events: string[] = [];
    // Sent without waiting: both workers take wake-ups of the same session while reviews run on it.
    for (let turn = 1; turn <= 30; turn++) {
      const sent = await stack.post('/v1/messages', { chat_id: 'race', user_id: 'u1', text: `turn ${turn}: ${longText(`q${turn}`, 2500)}` });
      expect(sent.status).toBe(202);
      events.push(sent.body.event_id);
    }
    for (const [i, id] of events.entries()) expect((await stack.waitForEvent(id, 120_000)).reply.text).toMatch(new RegExp(`^answer ${i + 1}: `));
    const children = await childrenPerSession();
    expect(children.length).toBeGreaterThanOrEqual(1);
    expect(children.every((count) => count === 1)).toBe(true);
    const reviews = await stack.database.db.selectFrom('reviews').select('status').execute();
    expect(reviews.length).toBeGreaterThan(0);
    for (const request of fake.requests) assertNoOrphans(request);
  });

  it('leaves the old session as it was when the worker is killed mid-compression, and the next one finishes it', async () => {
    let first = true;
    fake.handler = (request) => {
      // The first summary call never answers: its worker is killed while waiting for it.
      if (isSummaryRequest(request) && first) {
        first = false;
        return { hang: true };
      }
      return chatModel(request);
    };
    let sessionId = '';
    for (let turn = 1; ; turn++) {
      const sent = await stack.post('/v1/messages?wait=10', { chat_id: 'kill', user_id: 'u1', text: `turn ${turn}: ${longText(`k${turn}`, 2500)}` });
      sessionId = sent.body.session_id;
      if (sent.status === 202) break;
      expect(sent.body.reply.text).toMatch(new RegExp(`^answer ${turn}: `));
    }
    await waitFor(async () => !first, { what: 'the summary call' });
    const holder = await stack.database.db.selectFrom('session_leases').select('owner').where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    const victim = stack.processes().find((worker) => worker.child.pid === Number(holder.owner.split(':')[1]));
    if (!victim) throw new Error('no worker holds the session');
    await stopProcess(victim, 'SIGKILL');
    // Killed between the claim and the commit: nothing of the child exists, the session is whole.
    const parent = await stack.database.db.selectFrom('sessions').select(['ended_at']).where('id', '=', sessionId).executeTakeFirstOrThrow();
    expect(parent.ended_at).toBeNull();
    expect(await stack.database.db.selectFrom('sessions').select('id').where('parent_session_id', '=', sessionId).execute()).toEqual([]);
    await stack.startProcess('worker');
    const child = await waitFor(async () => (await stack.database.db.selectFrom('sessions').select('id').where('parent_session_id', '=', sessionId).executeTakeFirst())?.id, {
      timeoutMs: 60_000,
      what: 'the child session',
    });
    const open = await waitFor(
      async () => {
        const rows = await stack.database.db.selectFrom('inbound_events').select('status').where('session_id', 'in', [sessionId, child]).execute();
        return rows.every((row) => row.status === 'done') ? rows : undefined;
      },
      { timeoutMs: 60_000, what: 'every message answered' },
    );
    expect(open.length).toBeGreaterThan(0);
    expect((await stack.get(`/v1/sessions/${sessionId}`)).body).toMatchObject({ end_reason: 'compression', child_session_id: child });
    expect((await childrenPerSession()).every((count) => count === 1)).toBe(true);
  });
});
