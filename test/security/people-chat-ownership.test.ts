import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { personWithToken } from '../support/people.ts';
import type { TestPerson } from '../support/people.ts';
import { startStack } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * A member speaks as themself on POST /v1/messages, and the chat_id they name must be theirs too:
 * a message into an API chat someone else started would join that person's session, its history in
 * the model's context. It is a 404 naming chat_id, with nothing stored or enqueued, as the session
 * routes answer someone else's session; an operator of the profile and the bootstrap token may.
 */
describe("a member cannot post into another person's API chat", () => {
  let llm: FakeLLM;
  let stack: Stack;
  let alice: TestPerson;
  let bob: TestPerson;
  let operator: TestPerson;
  let aliceSession: string;

  const post = async (who: TestPerson, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: any }> => {
    const response = await fetch(`${stack.url}/v1/messages`, { method: 'POST', headers: { ...who.auth, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const type = response.headers.get('content-type') ?? '';
    // An accepted streaming request answers events, not JSON: kept as text for the assertion to show.
    return { status: response.status, type, body: type.includes('json') ? await response.json() : await response.text() };
  };
  const transcriptOf = async (who: TestPerson, sessionId: string): Promise<unknown[]> => {
    const response = await fetch(`${stack.url}/v1/sessions/${sessionId}/messages`, { headers: who.auth });
    expect(response.status).toBe(200);
    return ((await response.json()) as { messages: unknown[] }).messages;
  };
  const eventCount = async () =>
    Number(
      (
        await stack.database.db
          .selectFrom('inbound_events')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `echo: ${request.lastUserText}` }) });
    stack = await startStack({ model: llm });
    const db = stack.database.db;
    alice = await personWithToken(db, 'Alice', [{ role: 'member', profiles: [] }], ['api:alice']);
    bob = await personWithToken(db, 'Bob', [{ role: 'member', profiles: [] }], ['api:bob']);
    operator = await personWithToken(db, 'Olga', [{ role: 'operator', profiles: ['main'] }], ['api:olga']);
    const started = await post(alice, { chat_id: 'a1', text: 'my secret pineapple plan' });
    expect(started.status).toBe(202);
    aliceSession = started.body.session_id;
    await stack.waitForEvent(started.body.event_id);
  });
  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
  });

  it("answers a member posting into someone else's chat with a 404 naming chat_id, storing and enqueuing nothing", async () => {
    const transcript = (await transcriptOf(alice, aliceSession)).length;
    const events = await eventCount();
    const modelCalls = llm.requests.length;
    const attempts = [
      await post(bob, { chat_id: 'a1', text: 'what was the plan?' }),
      await post(bob, { chat_id: 'a1', profile: 'main', user_id: 'alice', text: 'what was the plan?', idempotency_key: 'k1' }),
      // The live variant refuses before any stream starts, in the same JSON.
      await post(bob, { chat_id: 'a1', text: 'what was the plan?' }, { accept: 'text/event-stream' }),
      // A chat command would end Alice's session or read its status.
      await post(bob, { chat_id: 'a1', text: '/new' }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(404);
      expect(attempt.type).toContain('application/json');
      expect(attempt.body.error).toMatchObject({ code: 'not_found', field: 'chat_id' });
    }
    expect((await transcriptOf(alice, aliceSession)).length).toBe(transcript);
    expect(await eventCount()).toBe(events);
    expect(llm.requests.length).toBe(modelCalls);
    const session = await stack.database.db.selectFrom('sessions').select(['ended_at', 'origin_user_id']).where('id', '=', aliceSession).executeTakeFirstOrThrow();
    expect(session).toEqual({ ended_at: null, origin_user_id: alice.person.key });
  });

  it('lets the member start a chat of their own, and the starter go on in theirs', async () => {
    const own = await post(bob, { chat_id: 'b1', text: 'my mango plan' });
    expect(own.status).toBe(202);
    expect(own.body.session_id).not.toBe(aliceSession);
    expect((await stack.waitForEvent(own.body.event_id)).reply.text).toBe('echo: my mango plan');
    const session = await stack.database.db.selectFrom('sessions').select('origin_user_id').where('id', '=', own.body.session_id).executeTakeFirstOrThrow();
    expect(session.origin_user_id).toBe(bob.person.key);
    const again = await post(alice, { chat_id: 'a1', text: 'still mine' });
    expect(again.status).toBe(202);
    expect(again.body.session_id).toBe(aliceSession);
    await stack.waitForEvent(again.body.event_id);
  });

  it('gives a new chat two people name at the same moment to one of them, the other a 404, never one session to both', async () => {
    // Both requests pass the ingress's look at the chat (it does not exist yet); the commit decides.
    const chats = Array.from({ length: 12 }, (_, index) => `race-${index}`);
    const answers = await Promise.all(chats.flatMap((chat) => [post(alice, { chat_id: chat, text: `alice in ${chat}` }), post(bob, { chat_id: chat, text: `bob in ${chat}` })]));
    for (const [index, chat] of chats.entries()) {
      const pair = [answers[2 * index]!, answers[2 * index + 1]!];
      const statuses = pair.map((answer) => answer.status).sort();
      expect(statuses, `${chat}: ${JSON.stringify(pair.map((answer) => answer.body))}`).toEqual([202, 404]);
      expect(pair.find((answer) => answer.status === 404)!.body.error).toMatchObject({ code: 'not_found', field: 'chat_id' });
      await stack.waitForEvent(pair.find((answer) => answer.status === 202)!.body.event_id);
    }
    const mixed = await stack.database.db
      .selectFrom('inbound_events')
      .select('session_id')
      .where('text', 'like', '% in race-%')
      .groupBy('session_id')
      .having((eb) => eb.fn.count('user_id').distinct(), '>', 1)
      .execute();
    expect(mixed).toEqual([]);
  });

  it("lets an operator of the profile and the bootstrap token post into anyone's chat", async () => {
    const byOperator = await post(operator, { chat_id: 'a1', text: 'operator here' });
    expect(byOperator.status).toBe(202);
    expect(byOperator.body.session_id).toBe(aliceSession);
    await stack.waitForEvent(byOperator.body.event_id);
    const byBootstrap = await stack.post('/v1/messages', { chat_id: 'a1', user_id: 'carol', text: 'bootstrap here' });
    expect(byBootstrap.status).toBe(202);
    expect(byBootstrap.body.session_id).toBe(aliceSession);
    await stack.waitForEvent(byBootstrap.body.event_id);
  });

  it('refuses a member whose grant does not cover the profile a binding sends the chat to, and lets one whose grant does', async () => {
    expect((await stack.post('/v1/profiles', { name: 'ops' })).status).toBe(201);
    const put = await stack.put('/v1/bindings', { bindings: [{ platform: 'api', chat_id: 'ops-room', profile: 'ops' }] });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const mainOnly = await personWithToken(stack.database.db, 'Mia', [{ role: 'member', profiles: ['main'] }], ['api:mia']);
    const events = await eventCount();
    // No profile named: the guard saw main, which Mia may use, but the binding sends the chat to ops.
    const refused = await post(mainOnly, { chat_id: 'ops-room', text: 'hello ops' });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ code: 'not_found', field: 'profile' });
    expect(await eventCount()).toBe(events);
    const allowed = await post(alice, { chat_id: 'ops-room', text: 'hello ops' });
    expect(allowed.status).toBe(202);
    await stack.waitForEvent(allowed.body.event_id);
    const session = await stack.database.db.selectFrom('sessions').select('profile_id').where('id', '=', allowed.body.session_id).executeTakeFirstOrThrow();
    expect(session.profile_id).toBe('ops');
  });
});
