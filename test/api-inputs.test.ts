import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

async function rowCounts(stack: Stack) {
  const result = await sql<{ events: string; sessions: string; messages: string }>`
    SELECT (SELECT count(*) FROM inbound_events) AS events,
           (SELECT count(*) FROM sessions) AS sessions,
           (SELECT count(*) FROM messages) AS messages`.execute(stack.database.db);
  return result.rows[0];
}

describe('API input handling', () => {
  let stack: Stack;
  beforeAll(async () => {
    // No model configured: the stack must still start and answer.
    stack = await startStack({ env: { HERALD_MAX_MESSAGE_CHARS: '1000' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('answers with a note on configuring a model when none is set', async () => {
    const response = await stack.post('/v1/messages?wait=20', { chat_id: 'c-nomodel', user_id: 'u1', text: 'hello' });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toMatch(/HERALD_MODEL/);
    expect(response.body.event_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is alive and ready', async () => {
    expect((await stack.get('/healthz')).status).toBe(200);
    const ready = await stack.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ postgres: 'ok', redis: 'ok' });
  });

  it('refuses bad input with the right status and writes nothing', async () => {
    const before = await rowCounts(stack);
    const noAuth = await fetch(`${stack.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'c', user_id: 'u', text: 'x' }),
    });
    expect(noAuth.status).toBe(401);
    const wrong = await stack.post('/v1/messages', { chat_id: 'c', user_id: 'u', text: 'x' }, { authorization: 'Bearer nope-nope-nope' });
    expect(wrong.status).toBe(401);

    const missing = await stack.post('/v1/messages', { chat_id: 'c', text: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.field).toBe('user_id');
    expect(missing.body.error.message).toMatch(/user_id/);

    const empty = await stack.post('/v1/messages', { chat_id: 'c', user_id: 'u', text: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.field).toBe('text');

    const wrongType = await stack.post('/v1/messages', { chat_id: { a: 1 }, user_id: 'u', text: 'x' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.field).toBe('chat_id');

    const notJson = await stack.post('/v1/messages', '{"chat_id": "c", ');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toMatch(/JSON/);

    const badWait = await stack.post('/v1/messages?wait=soon', { chat_id: 'c', user_id: 'u', text: 'x' });
    expect(badWait.status).toBe(400);
    expect(badWait.body.error.field).toBe('wait');

    const tooLong = await stack.post('/v1/messages', { chat_id: 'c', user_id: 'u', text: 'x'.repeat(1001) });
    expect(tooLong.status).toBe(413);
    expect(tooLong.body.error.message).toMatch(/1000/);

    const huge = await stack.post('/v1/messages', { chat_id: 'c', user_id: 'u', text: 'x'.repeat(200_000) });
    expect(huge.status).toBe(413);

    expect(await rowCounts(stack)).toEqual(before);
  });

  it('treats a repeated idempotency key as the same event with the same answer', async () => {
    const body = { chat_id: 'c-idem', user_id: 'u1', text: 'once', idempotency_key: 'k-1' };
    const [a, b] = await Promise.all([stack.post('/v1/messages?wait=20', body), stack.post('/v1/messages?wait=20', body)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.event_id).toBe(a.body.event_id);
    expect(b.body.reply).toEqual(a.body.reply);
    const c = await stack.post('/v1/messages', body);
    expect(c.body.event_id).toBe(a.body.event_id);
    const events = await sql<{ count: string }>`SELECT count(*) FROM inbound_events WHERE dedupe_key IS NOT NULL`.execute(stack.database.db);
    expect(Number(events.rows[0]?.count)).toBe(1);
  });

  it('starts a fresh session on /new and keeps routing to it', async () => {
    const first = await stack.post('/v1/messages?wait=20', { chat_id: 'c-new', user_id: 'u1', text: 'hi' });
    const again = await stack.post('/v1/messages', { chat_id: 'c-new', user_id: 'u1', text: 'hi again' });
    expect(again.body.session_id).toBe(first.body.session_id);
    const fresh = await stack.post('/v1/messages?wait=5', { chat_id: 'c-new', user_id: 'u1', text: '/new' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.session_id).not.toBe(first.body.session_id);
    expect(fresh.body.reply.text).toMatch(/new session/i);
    const after = await stack.post('/v1/messages', { chat_id: 'c-new', user_id: 'u1', text: 'hello new' });
    expect(after.body.session_id).toBe(fresh.body.session_id);
    const route = await stack.database.db.selectFrom('session_routes').selectAll().where('session_key', '=', 'agent:main:api:dm:c-new').executeTakeFirstOrThrow();
    expect(route.session_id).toBe(fresh.body.session_id);
  });

  it('keeps threads apart and reports unknown sessions as 404', async () => {
    const a = await stack.post('/v1/messages', { chat_id: 'c-t', user_id: 'u1', text: 'a', thread_id: 't1' });
    const b = await stack.post('/v1/messages', { chat_id: 'c-t', user_id: 'u1', text: 'b', thread_id: 't2' });
    expect(a.body.session_id).not.toBe(b.body.session_id);
    const missing = await stack.get('/v1/sessions/00000000-0000-0000-0000-000000000000/messages');
    expect(missing.status).toBe(404);
  });
});
