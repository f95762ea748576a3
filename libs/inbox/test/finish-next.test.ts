import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { acceptInbound, finishTurn, startTurn } from '@herald/inbox';
import { claimLease, openInbox } from '@herald/leases';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

// A claim reads the inbox with it, and the end of a turn reads the inbox in the same call (herald_finish_turn_next) and lets the lease
// go only when nothing is left to run: the drain relies on both (services/worker/src/session-drain.ts).
describe('finishing a turn', () => {
  const database = useTestDatabase();
  const message = (chatId: string, text: string) => acceptInbound(database.db, { profileId: 'main', platform: 'api', chatType: 'dm', chatId, userId: 'api:u', text });
  const end = { reply: 'done', failed: false, error: null, iterations: 1, modelCall: null };

  it('claims with the open events in hand, oldest first', async () => {
    const first = await message('claim-inbox', 'one');
    const second = await message('claim-inbox', 'two');
    const lease = (await claimLease(database.db, first.sessionId, 'w', 30_000))!;
    expect(lease.inbox.queueMode).toBe('followup');
    expect(lease.inbox.events.map((event) => [event.id, event.text, event.status])).toEqual([
      [first.eventId, 'one', 'pending'],
      [second.eventId, 'two', 'pending'],
    ]);
  });

  it('releases the lease when the inbox is empty, and returns no event', async () => {
    const accepted = await message('finish-empty', 'hi');
    const lease = (await claimLease(database.db, accepted.sessionId, 'w', 30_000))!;
    const turnId = crypto.randomUUID();
    await startTurn(database.db, lease, turnId, [accepted.eventId], 'prompt');
    const next = await finishTurn(database.db, lease, turnId, [accepted.eventId], end);
    expect(next).toMatchObject({ released: true, events: [] });
    // Released: another worker claims at once instead of waiting out the TTL.
    expect(await claimLease(database.db, accepted.sessionId, 'other', 30_000)).toMatchObject({ tookOver: false });
  });

  it('keeps the lease and returns the waiting messages in order when more arrived', async () => {
    const first = await message('finish-more', 'one');
    const lease = (await claimLease(database.db, first.sessionId, 'w', 30_000))!;
    const turnId = crypto.randomUUID();
    await startTurn(database.db, lease, turnId, [first.eventId], 'prompt');
    const second = await message('finish-more', 'two');
    const third = await message('finish-more', 'three');
    const next = await finishTurn(database.db, lease, turnId, [first.eventId], end);
    expect(next.released).toBe(false);
    expect(next.events.map((event) => [event.id, event.text])).toEqual([
      [second.eventId, 'two'],
      [third.eventId, 'three'],
    ]);
    expect(await claimLease(database.db, first.sessionId, 'other', 30_000)).toBeUndefined();
    // The plain read sees the same inbox and never releases.
    expect((await openInbox(database.db, first.sessionId)).events).toHaveLength(2);
    expect(await claimLease(database.db, first.sessionId, 'other', 30_000)).toBeUndefined();
  });

  it('counts the turn for the reviews in the same call, and a failure to count keeps the reply', async () => {
    const counts = { profileId: 'main', userId: 'api:u', interrupted: false, errored: false, scheduled: false };
    const counted = await message('finish-counts', 'one');
    const lease = (await claimLease(database.db, counted.sessionId, 'w', 30_000))!;
    const turnId = crypto.randomUUID();
    await startTurn(database.db, lease, turnId, [counted.eventId], 'prompt');
    expect(await finishTurn(database.db, lease, turnId, [counted.eventId], { ...end, completion: counts })).toMatchObject({ reviewDue: false });
    const row = await database.db.selectFrom('review_counters').selectAll().where('session_id', '=', counted.sessionId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ last_turn_id: turnId, user_turns_since_memory: 1 });

    const broken = await message('finish-broken', 'two');
    const brokenLease = (await claimLease(database.db, broken.sessionId, 'w', 30_000))!;
    const brokenTurn = crypto.randomUUID();
    await startTurn(database.db, brokenLease, brokenTurn, [broken.eventId], 'prompt');
    await sql`ALTER TABLE review_counters RENAME TO review_counters_away`.execute(database.db);
    try {
      const next = await finishTurn(database.db, brokenLease, brokenTurn, [broken.eventId], { ...end, completion: counts });
      expect(next).toMatchObject({ reviewDue: null, released: true });
    } finally {
      await sql`ALTER TABLE review_counters_away RENAME TO review_counters`.execute(database.db);
    }
    const event = await database.db.selectFrom('inbound_events').select(['status', 'reply_text']).where('id', '=', broken.eventId).executeTakeFirstOrThrow();
    expect(event).toEqual({ status: 'done', reply_text: 'done' });
  });
});
