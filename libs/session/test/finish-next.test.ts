import { describe, expect, it } from 'vitest';
import { acceptInbound, claimLease, finishTurn, openInbox, startTurn } from '@herald/session';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

// A claim reads the inbox with it, and the end of a turn reads the inbox in the same call (herald_finish_turn_next) and lets the lease
// go only when nothing is left to run: the drain relies on both (services/worker/src/session-drain.ts).
describe('finishing a turn', () => {
  const database = useTestDatabase();
  const message = (chatId: string, text: string) =>
    acceptInbound(database.db, { profileId: 'main', platform: 'api', chatType: 'dm', chatId, userId: 'api:u', text });
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
});
