import { describe, expect, it } from 'vitest';
import { acceptInbound } from '@herald/inbox';
import { RedisNoticeBus, TurnDoneListener, publishTurnDone } from '@herald/queue';
import { waitForReply } from '../services/ingress/src/reply-waiter.ts';
import { useTestDatabase } from './support/use-test-database.ts';
import { countQueries } from './support/db-probes.ts';
import { uniquePrefix } from './support/test-database.ts';

// `?wait` callers are woken by the turn-done notice; their poll is only for a lost notice, so it
// backs off (500 ms, doubling to 4 s) instead of reading the event every 500 ms while they wait.
describe('waiting for a reply', () => {
  const database = useTestDatabase();

  it('reads a waiting event a few times over five seconds, not every 500 ms, and answers at the notice', async () => {
    const bus = new RedisNoticeBus('redis://127.0.0.1:6379');
    const prefix = uniquePrefix();
    const listener = new TurnDoneListener(bus, prefix);
    await listener.start();
    try {
      const accepted = await acceptInbound(database.db, { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'poll-backoff', userId: 'api:u', text: 'hello' });
      const counted = countQueries(database.db, 'inbound_events');
      const still = await waitForReply(counted.db, listener, accepted.eventId, 5_000);
      expect(still?.status).toBe('pending');
      // 500 ms apart this was 11 reads; backing off, at most the reads at 0, 0.5, 1.5 and 3.5 s and the last.
      expect(counted.count()).toBeLessThanOrEqual(6);
      const before = counted.count();
      const woken = waitForReply(counted.db, listener, accepted.eventId, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await database.db.updateTable('inbound_events').set({ status: 'done', reply_text: 'hi' }).where('id', '=', accepted.eventId).execute();
      await publishTurnDone(bus, prefix, [accepted.eventId]);
      expect((await woken)?.status).toBe('done');
      expect(counted.count() - before).toBeLessThanOrEqual(3);
    } finally {
      await bus.close();
    }
  });
});
