import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { acceptInbound } from '@herald/inbox';
import { claimLease, openInbox, releaseLease } from '@herald/leases';
import { wakeJobId } from '@herald/queue';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';
import { waitForLockWait } from '../../../test/support/db-probes.ts';
import { gate } from '../../../test/support/wait.ts';

const message = (text: string) => ({
  profileId: 'main',
  platform: 'api',
  chatType: 'dm',
  chatId: 'wake',
  userId: 'api:u',
  text,
});

describe('wake-up generations close the last-drain race', () => {
  const database = useTestDatabase();

  it('collapses messages into one pending job until a worker starts draining, then names a new one', async () => {
    const first = await acceptInbound(database.db, message('one'));
    const second = await acceptInbound(database.db, message('two'));
    // Both wait for the same job: at most one pending wake-up per session.
    expect(wakeJobId(second.sessionId, second.wakeGeneration)).toBe(wakeJobId(first.sessionId, first.wakeGeneration));
    const lease = await claimLease(database.db, first.sessionId, 'w', 5000);
    expect(lease).toMatchObject({ sessionId: first.sessionId, owner: 'w' });
    // Arriving after the claim, while that job is active: a job id of its own, so it cannot be swallowed.
    const third = await acceptInbound(database.db, message('three'));
    expect(wakeJobId(third.sessionId, third.wakeGeneration)).not.toBe(wakeJobId(first.sessionId, first.wakeGeneration));
    expect(third.wakeGeneration).toBe(lease?.wakeGeneration);
    await releaseLease(database.db, lease!);
  });

  it('makes a claim wait for a message being committed, so its inbox read sees it', async () => {
    const seed = await acceptInbound(database.db, message('seed'));
    const inserted = gate();
    const commit = gate();
    const order: string[] = [];
    // Hold the session row lock as ingress does mid-insert.
    const holder = database.db.transaction().execute(async (trx) => {
      await sql`UPDATE sessions SET updated_at = now() WHERE id = ${seed.sessionId}`.execute(trx);
      await sql`INSERT INTO inbound_events (id, session_id, platform, user_id, text)
                  VALUES (gen_random_uuid(), ${seed.sessionId}, 'api', 'u', 'late arrival')`.execute(trx);
      inserted.open();
      await commit.opened;
    });
    await inserted.opened;
    const claimed = claimLease(database.db, seed.sessionId, 'w2', 5000).then((lease) => {
      order.push('claimed');
      return lease;
    });
    try {
      await waitForLockWait(database.db, 'the claim waiting for the message');
    } finally {
      order.push('message committing');
      commit.open();
    }
    const lease = await claimed;
    // Read the inbox right after the claim, as the worker does, without waiting for anything else.
    const inbox = await openInbox(database.db, seed.sessionId);
    await holder;
    expect(order).toEqual(['message committing', 'claimed']);
    expect(inbox.events.map((e) => e.text)).toContain('late arrival');
    await releaseLease(database.db, lease!);
  });
});
