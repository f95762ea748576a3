import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_PLATFORMS } from '@herald/core';
import { sendJob } from '@herald/jobs';
import { REVIEW_DEAD_LETTER_QUEUE } from '@herald/knowledge';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// The API routes the console added: the session list, transcript pages, and the dead letters.
describe('the routes the console reads through', () => {
  let stack: Stack;
  beforeAll(async () => {
    // No worker: messages are accepted (sessions exist) and nothing answers them.
    stack = await startStack({ workers: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const post = async (chat: string, user: string, text: string) => {
    const response = await stack.post('/v1/messages', { chat_id: chat, user_id: user, text });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body as { session_id: string };
  };
  const ids = (body: any) => body.sessions.map((session: any) => session.session_id);

  it('lists sessions newest first, filtered by platform, person, chat, live or ended, and pages by keyset', async () => {
    const first = await post('room-1', 'alice', 'hello');
    await post('room-1', 'bob', 'bob writes in the same chat');
    const other = await post('room-2', 'carol', 'another chat');
    await stack.post('/v1/messages', { chat_id: 'room-1', user_id: 'alice', text: '/new' });
    const next = await post('room-1', 'alice', 'after /new');
    expect(next.session_id).not.toBe(first.session_id);

    expect(ids((await stack.get('/v1/sessions')).body)).toEqual([next.session_id, other.session_id, first.session_id]);
    expect(ids((await stack.get('/v1/sessions?chat_id=room-1')).body)).toEqual([next.session_id, first.session_id]);
    // A person is anyone who wrote in the session, not only the one who opened it.
    expect(ids((await stack.get('/v1/sessions?user_id=bob')).body)).toEqual([first.session_id]);
    expect(ids((await stack.get('/v1/sessions?state=ended')).body)).toEqual([first.session_id]);
    expect(ids((await stack.get('/v1/sessions?state=live&chat_id=room-1')).body)).toEqual([next.session_id]);
    expect(ids((await stack.get('/v1/sessions?platform=telegram')).body)).toEqual([]);
    expect(ids((await stack.get('/v1/sessions?platform=api&user_id=carol')).body)).toEqual([other.session_id]);
    // The platforms the console's filter offers come from the registry: every chat platform, the API and cron.
    const offered = (await stack.get('/v1/sessions')).body.platforms.map((platform: { name: string }) => platform.name);
    expect(offered.toSorted()).toEqual(['api', 'cron', ...CHAT_PLATFORMS].toSorted());

    const row = (await stack.get(`/v1/sessions?chat_id=room-1&state=ended`)).body.sessions[0];
    expect(row).toMatchObject({ platform: 'api', chat_type: 'dm', chat_id: 'room-1', live: false, origin_user_id: 'api:alice', pending_waits: 0 });

    const page1 = (await stack.get('/v1/sessions?limit=2')).body;
    expect(ids(page1)).toEqual([next.session_id, other.session_id]);
    expect(page1.next_before).toBe(other.session_id);
    const page2 = (await stack.get(`/v1/sessions?limit=2&before=${page1.next_before}`)).body;
    expect(ids(page2)).toEqual([first.session_id]);
    expect(page2.next_before).toBeNull();

    // Lineage: the children of a session (compaction and subagent runs set parent_session_id).
    await stack.database.db.updateTable('sessions').set({ parent_session_id: first.session_id }).where('id', '=', other.session_id).execute();
    expect(ids((await stack.get(`/v1/sessions?parent_id=${first.session_id}`)).body)).toEqual([other.session_id]);
    expect((await stack.get(`/v1/sessions?chat_id=room-1&state=ended`)).body.sessions[0].children).toBe(1);
  });

  it('refuses bad list filters with a 400 naming the parameter', async () => {
    for (const [path, field] of [
      ['/v1/sessions?limit=0', 'limit'],
      ['/v1/sessions?limit=abc', 'limit'],
      ['/v1/sessions?state=paused', 'state'],
      ['/v1/sessions?before=1%27%20OR%201=1', 'before'],
      ['/v1/sessions?parent_id=..%2F..%2Fetc', 'parent_id'],
      ['/v1/sessions?platform=tele%00gram', 'platform'],
      ['/v1/sessions?chat_id=', 'chat_id'],
      ['/v1/sessions?surprise=1', 'surprise'],
    ] as const) {
      const response = await stack.get(path);
      expect(response.status, path).toBe(400);
      expect(response.body.error.field, path).toBe(field);
    }
    expect((await stack.get('/v1/sessions', { authorization: 'Bearer wrong' })).status).toBe(401);
  });

  it('pages a 10,000-message transcript by keyset on seq: newest page, before, after, around a message', async () => {
    const { session_id: sessionId } = await post('long-chat', 'dana', 'the start');
    await sql`
      INSERT INTO messages (session_id, seq, role, content)
      SELECT ${sessionId}::uuid, n, CASE WHEN n % 2 = 0 THEN 'assistant' ELSE 'user' END, 'message ' || n
        FROM generate_series(1, 10000) AS n`.execute(stack.database.db);
    const base = `/v1/sessions/${sessionId}/messages`;
    const seqs = (body: any) => body.messages.map((message: any) => message.seq);

    const latest = (await stack.get(`${base}?limit=100`)).body;
    expect(seqs(latest)).toEqual(Array.from({ length: 100 }, (_, i) => 9901 + i));
    expect(latest).toMatchObject({ has_before: true, has_after: false });
    expect(latest.messages[99]).toMatchObject({ seq: 10000, role: 'assistant', content: 'message 10000', id: expect.stringMatching(/^[0-9]+$/) });

    const older = (await stack.get(`${base}?limit=100&before=9901`)).body;
    expect(seqs(older)).toEqual(Array.from({ length: 100 }, (_, i) => 9801 + i));
    expect(older).toMatchObject({ has_before: true, has_after: true });

    const first = (await stack.get(`${base}?limit=50&after=0`)).body;
    expect(seqs(first)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(first).toMatchObject({ has_before: false, has_after: true });

    const target = await stack.database.db.selectFrom('messages').select('id').where('session_id', '=', sessionId).where('seq', '=', 5000).executeTakeFirstOrThrow();
    const around = (await stack.get(`${base}?limit=11&around=${target.id}`)).body;
    expect(seqs(around)).toEqual(Array.from({ length: 11 }, (_, i) => 4995 + i));
    expect(around).toMatchObject({ has_before: true, has_after: true });

    const end = (await stack.get(`${base}?after=9995`)).body;
    expect(seqs(end)).toEqual([9996, 9997, 9998, 9999, 10000]);
    expect(end.has_after).toBe(false);
  });

  it('keeps the unpaged transcript as before, and refuses bad page parameters', async () => {
    const { session_id: sessionId } = await post('short-chat', 'erin', 'only message');
    const whole = (await stack.get(`/v1/sessions/${sessionId}/messages`)).body;
    expect(whole).toEqual({ messages: [] });
    const other = await post('elsewhere', 'erin', 'x');
    const foreign = await stack.database.db.insertInto('messages').values({ session_id: other.session_id, seq: 1, role: 'user', content: 'not yours' }).returning('id').executeTakeFirstOrThrow();
    const base = `/v1/sessions/${sessionId}/messages`;
    expect((await stack.get(`${base}?around=${foreign.id}`)).status).toBe(404);
    for (const [query, field] of [
      ['limit=501', 'limit'],
      ['limit=0', 'limit'],
      ['before=-1', 'before'],
      ['before=3&after=1', 'before'],
      ['around=1%20OR%201', 'around'],
      ['around=99999999999999999999', 'around'],
      ['cursor=1', 'cursor'],
    ] as const) {
      const response = await stack.get(`${base}?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.field, query).toBe(field);
    }
    // A malformed id is refused before any handler runs (the shared id schema): 400, not 404.
    expect((await stack.get('/v1/sessions/not-a-uuid/messages?limit=5')).status).toBe(400);
    expect((await stack.get(`/v1/sessions/${randomUUID()}/messages?limit=5`)).status).toBe(404);
  });

  it('lists failed deliveries with their reason; retry gives one a fresh budget, discard removes it, once', async () => {
    const { session_id: sessionId } = await post('dl-chat', 'frank', 'hi');
    const insert = (key: string, status: 'failed' | 'delivered') =>
      stack.database.db
        .insertInto('outbox')
        .values({
          idempotency_key: key,
          platform: 'telegram',
          target: JSON.stringify({ chatId: '77' }),
          text: 'the reply',
          session_id: sessionId,
          source: 'reply',
          status,
          attempts: 8,
          last_error: 'Forbidden: bot was blocked by the user',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
    const failed = await insert('reply:dl-1', 'failed');
    const delivered = await insert('reply:dl-2', 'delivered');

    const listed = (await stack.get('/v1/admin/dead-letters')).body;
    expect(listed.deliveries.map((row: any) => row.id)).toEqual([failed.id]);
    expect(listed.deliveries[0]).toMatchObject({ session_id: sessionId, platform: 'telegram', attempts: 8, reason: 'Forbidden: bot was blocked by the user', text: 'the reply' });

    expect((await stack.post(`/v1/admin/dead-letters/deliveries/${delivered.id}/retry`, {})).status).toBe(404);
    const retried = await stack.post(`/v1/admin/dead-letters/deliveries/${failed.id}/retry`, {});
    expect(retried.status).toBe(202);
    const row = await stack.database.db.selectFrom('outbox').selectAll().where('id', '=', failed.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'pending', attempts: 0, last_error: null });
    expect((await stack.post(`/v1/admin/dead-letters/deliveries/${failed.id}/retry`, {})).status).toBe(404);

    await stack.database.db.updateTable('outbox').set({ status: 'failed' }).where('id', '=', failed.id).execute();
    expect((await stack.delete(`/v1/admin/dead-letters/deliveries/${delivered.id}`)).status).toBe(404);
    expect((await stack.delete(`/v1/admin/dead-letters/deliveries/${failed.id}`)).status).toBe(204);
    expect(await stack.database.db.selectFrom('outbox').select('id').where('id', '=', failed.id).executeTakeFirst()).toBeUndefined();
    expect((await stack.delete(`/v1/admin/dead-letters/deliveries/${failed.id}`)).status).toBe(404);
    // Malformed ids are refused by the shared id check; '..' resolves to no route at all.
    for (const [bad, status] of [
      ['nope', 400],
      ['%2e%2e', 404],
      [`${failed.id}%00`, 400],
    ] as const) {
      expect((await stack.post(`/v1/admin/dead-letters/deliveries/${bad}/retry`, {})).status, bad).toBe(status);
    }
  });

  it("lists pg-boss dead letters with the failed run's reason, and discards one", async () => {
    const reviewId = randomUUID();
    await sendJob(stack.database.db, REVIEW_DEAD_LETTER_QUEUE, { reviewId });
    const jobs = (await stack.get('/v1/admin/dead-letters')).body.jobs;
    const job = jobs.find((entry: any) => entry.data?.reviewId === reviewId);
    expect(job).toMatchObject({ queue: REVIEW_DEAD_LETTER_QUEUE, reason: 'no error recorded' });
    expect((await stack.delete(`/v1/admin/dead-letters/jobs/${randomUUID()}`)).status).toBe(404);
    expect((await stack.delete('/v1/admin/dead-letters/jobs/not-an-id')).status).toBe(400);
    expect((await stack.delete(`/v1/admin/dead-letters/jobs/${job.id}`)).status).toBe(204);
    expect((await stack.get('/v1/admin/dead-letters')).body.jobs.some((entry: any) => entry.id === job.id)).toBe(false);
  });
});
