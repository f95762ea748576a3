import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { personWithToken } from '../support/people.ts';
import type { TestPerson } from '../support/people.ts';
import { startStack } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 32, point 3, ownership: a member sees their own sessions, events, messages, search, memory,
 * runs and cron jobs, and someone else's is a 404 (never a 403: an id is not confirmed). A grant
 * limited to profiles makes the other profiles' things 404 the same way.
 */
describe('a member sees only what is theirs', () => {
  let llm: FakeLLM;
  let stack: Stack;
  let ana: TestPerson;
  let bob: TestPerson;
  let viewer: TestPerson;
  let opsOperator: TestPerson;
  let anaTurn: { session_id: string; event_id: string };
  let bobTurn: { session_id: string; event_id: string };

  const call = async (who: TestPerson, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.url}${path}`, {
      method,
      headers: { ...who.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  };

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `echo: ${request.lastUserText}` }) });
    stack = await startStack({ model: llm });
    const db = stack.database.db;
    ana = await personWithToken(db, 'Ana', [{ role: 'member', profiles: [] }], ['api:ana']);
    bob = await personWithToken(db, 'Bob', [{ role: 'member', profiles: [] }], ['api:bob']);
    viewer = await personWithToken(db, 'Vera', [{ role: 'viewer', profiles: ['main'] }]);
    opsOperator = await personWithToken(db, 'Otto', [{ role: 'operator', profiles: ['ops'] }]);
    // A member never names who they are: the token does, whatever user_id the body claims.
    const anaSent = await call(ana, 'POST', '/v1/messages', { chat_id: 'ana-chat', user_id: 'bob', text: 'my pineapple plan' });
    const bobSent = await call(bob, 'POST', '/v1/messages', { chat_id: 'bob-chat', text: 'my mango plan' });
    expect([anaSent.status, bobSent.status]).toEqual([202, 202]);
    anaTurn = anaSent.body;
    bobTurn = bobSent.body;
    await stack.waitForEvent(anaTurn.event_id);
    await stack.waitForEvent(bobTurn.event_id);
  });
  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
  });

  it('reads only their own usage; a viewer sees all of main, an operator of ops none of it', async () => {
    const own = await call(ana, 'GET', '/v1/usage?group_by=person');
    expect(own.status).toBe(200);
    expect(own.body.rows.map((row: { person: string }) => row.person)).toEqual(['api:ana']);
    const everyone = await call(viewer, 'GET', '/v1/usage?group_by=person');
    expect(everyone.body.rows.map((row: { person: string }) => row.person).sort()).toEqual(['api:ana', 'api:bob']);
    const elsewhere = await call(opsOperator, 'GET', '/v1/usage?group_by=person');
    expect(elsewhere.body.rows).toEqual([]);
  });

  it('lists only their sessions, whatever user_id they ask for', async () => {
    const own = await call(ana, 'GET', '/v1/sessions');
    expect(own.status).toBe(200);
    expect(own.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([anaTurn.session_id]);
    expect(own.body.sessions[0].origin_user_id).toBe('api:ana');
    const asBob = await call(ana, 'GET', '/v1/sessions?user_id=bob');
    expect(asBob.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([anaTurn.session_id]);
    // The bootstrap admin sees both.
    expect((await stack.get('/v1/sessions')).body.sessions).toHaveLength(2);
  });

  it("answers someone else's session, messages, waits, deliveries and event with a 404, like an id that does not exist", async () => {
    for (const path of [
      `/v1/sessions/${bobTurn.session_id}`,
      `/v1/sessions/${bobTurn.session_id}/messages`,
      `/v1/sessions/${bobTurn.session_id}/waits`,
      `/v1/sessions/${bobTurn.session_id}/deliveries`,
      `/v1/sessions/${bobTurn.session_id}/lineage`,
      `/v1/events/${bobTurn.event_id}`,
    ]) {
      const theirs = await call(ana, 'GET', path);
      const nobodys = await call(ana, 'GET', path.replace(/[0-9a-f-]{36}/, randomUUID()));
      expect(theirs.status, path).toBe(404);
      expect(nobodys.status, path).toBe(404);
      expect(theirs.body.error.code).toBe(nobodys.body.error.code);
      expect((await call(ana, 'GET', path.replace(bobTurn.session_id, anaTurn.session_id).replace(bobTurn.event_id, anaTurn.event_id))).status, path).toBe(200);
    }
    expect((await call(ana, 'PATCH', `/v1/sessions/${bobTurn.session_id}`, { queue_mode: 'collect' })).status).toBe(404);
    expect((await call(ana, 'POST', `/v1/sessions/${bobTurn.session_id}/handoff`, { platform: 'telegram' })).status).toBe(404);
  });

  it('searches only their history, whatever user_id they ask for', async () => {
    const own = await call(ana, 'GET', '/v1/search?q=pineapple');
    expect(own.status).toBe(200);
    expect(own.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([anaTurn.session_id]);
    for (const path of ['/v1/search?q=mango', '/v1/search?q=mango&user_id=bob', `/v1/search?q=mango&user_id=${encodeURIComponent(bob.person.key)}`]) {
      const theirs = await call(ana, 'GET', path);
      expect(theirs.status, path).toBe(200);
      expect(theirs.body.sessions, path).toEqual([]);
    }
  });

  it("reads their own memory and not someone else's; deletes only their own entries", async () => {
    const db = stack.database.db;
    const bobs = await db.insertInto('memory_entries').values({ profile_id: 'main', store: 'user', user_id: bob.person.key, content: 'bob likes mango' }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('memory_entries').values({ profile_id: 'main', store: 'user', user_id: ana.person.key, content: 'ana likes pineapple' }).execute();
    const own = await call(ana, 'GET', '/v1/profiles/main/users/ana/memory');
    expect(own.status).toBe(200);
    expect(JSON.stringify(own.body)).toContain('pineapple');
    expect((await call(ana, 'GET', '/v1/profiles/main/users/bob/memory')).status).toBe(404);
    expect((await call(ana, 'GET', `/v1/profiles/main/memory?user_id=bob`)).status).toBe(404);
    expect((await call(ana, 'DELETE', `/v1/profiles/main/memory/${bobs.id}`)).status).toBe(404);
    expect(await db.selectFrom('memory_entries').select('id').where('id', '=', bobs.id).executeTakeFirst()).toBeDefined();
    expect((await call(bob, 'DELETE', `/v1/profiles/main/memory/${bobs.id}`)).status).toBe(204);
  });

  it('lists runs only of a session of theirs, and keeps cron jobs to their creator', async () => {
    expect((await call(ana, 'GET', '/v1/runs')).status).toBe(400);
    expect((await call(ana, 'GET', `/v1/runs?session_id=${bobTurn.session_id}`)).status).toBe(404);
    expect((await call(ana, 'GET', `/v1/runs?session_id=${anaTurn.session_id}`)).status).toBe(200);
    expect((await call(ana, 'GET', `/v1/runs/${randomUUID()}`)).status).toBe(404);

    const job = await call(ana, 'POST', '/v1/cron/jobs', { user_id: 'bob', name: 'daily', schedule: 'every 1h', prompt: 'summarise' });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect(job.body.user_id).toBe(ana.person.key);
    expect((await call(bob, 'GET', `/v1/cron/jobs/${job.body.job_id}`)).status).toBe(404);
    expect((await call(bob, 'DELETE', `/v1/cron/jobs/${job.body.job_id}`)).status).toBe(404);
    expect((await call(bob, 'GET', '/v1/cron/jobs')).body.jobs).toEqual([]);
    expect((await call(ana, 'GET', '/v1/cron/jobs')).body.jobs).toHaveLength(1);
  });

  it('lets a viewer read the profile granted, and nothing else; an operator of another profile gets 404s', async () => {
    expect((await call(viewer, 'GET', `/v1/sessions/${bobTurn.session_id}/messages`)).status).toBe(200);
    expect((await call(viewer, 'GET', '/v1/sessions')).body.sessions).toHaveLength(2);
    expect((await call(viewer, 'POST', '/v1/messages', { chat_id: 'v', text: 'hi' })).status).toBe(403);
    expect((await call(viewer, 'PATCH', `/v1/sessions/${bobTurn.session_id}`, { queue_mode: 'collect' })).status).toBe(403);
    expect((await call(opsOperator, 'GET', `/v1/sessions/${bobTurn.session_id}`)).status).toBe(404);
    expect((await call(opsOperator, 'GET', '/v1/sessions?profile=main')).status).toBe(404);
    expect((await call(opsOperator, 'GET', '/v1/sessions')).body.sessions).toEqual([]);
    expect((await call(opsOperator, 'GET', '/v1/admin/dead-letters')).status).toBe(403);
  });
});
