import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { acceptInbound } from '@herald/inbox';
import { claimLease, fenced, LeaseLostError, releaseLease, renewLease } from '@herald/leases';
import { appendMessages } from '@herald/transcript';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';
import { waitForLockWait } from '../../../test/support/db-probes.ts';
import { gate, waitFor } from '../../../test/support/wait.ts';

describe('session leases', () => {
  const database = useTestDatabase();
  let sessionId: string;
  beforeAll(async () => {
    const accepted = await acceptInbound(database.db, {
      profileId: 'main',
      platform: 'api',
      chatType: 'dm',
      chatId: 'lease',
      userId: 'api:u',
      text: 'hi',
    });
    sessionId = accepted.sessionId;
  });

  it('admits one holder at a time and grows the token on every claim', async () => {
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => claimLease(database.db, sessionId, `w${i}`, 5000)));
    const winners = claims.filter((claim) => claim !== undefined);
    expect(winners).toHaveLength(1);
    const first = winners[0]!;
    await releaseLease(database.db, first);
    const second = await claimLease(database.db, sessionId, 'w-next', 5000);
    expect(Number(second?.token)).toBe(Number(first.token) + 1);
    expect(Number(second?.wakeGeneration)).toBe(Number(first.wakeGeneration) + 1);
    await releaseLease(database.db, second!);
  });

  it('refuses every write of a holder whose lease expired and was taken over', async () => {
    const stale = (await claimLease(database.db, sessionId, 'stale', 5000))!;
    await sql`UPDATE session_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = ${sessionId}`.execute(database.db);
    expect(await renewLease(database.db, stale, 5000)).toBe(false);
    // claimLease answers null when it cannot claim: toBeDefined would pass on that.
    const fresh = (await claimLease(database.db, sessionId, 'fresh', 5000))!;
    expect(fresh).toMatchObject({ sessionId, owner: 'fresh', tookOver: true });
    expect(BigInt(fresh.token)).toBeGreaterThan(BigInt(stale.token));
    await expect(fenced(database.db, stale, (trx) => appendMessages(trx, sessionId, null, [{ role: 'assistant', content: 'late write' }]))).rejects.toSatisfy(LeaseLostError.isInstance);
    await fenced(database.db, fresh, (trx) => appendMessages(trx, sessionId, null, [{ role: 'assistant', content: 'current' }]));
    const rows = await database.db.selectFrom('messages').select('content').where('session_id', '=', sessionId).execute();
    expect(rows.map((r) => r.content)).toEqual(['current']);
    await releaseLease(database.db, fresh);
  });

  it('makes a competing claim wait for a fenced write in progress', async () => {
    // Long enough for the write to start inside it on a busy machine; then the test waits it out.
    const holder = (await claimLease(database.db, sessionId, 'holder', 3000))!;
    const inside = gate();
    const finish = gate();
    const order: string[] = [];
    const write = fenced(database.db, holder, async (trx) => {
      inside.open();
      await finish.opened;
      await appendMessages(trx, sessionId, null, [{ role: 'assistant', content: 'inside the lease' }]);
      order.push('write');
    });
    await inside.opened;
    // The lease runs out while the write holds the row: a claim may take it, but only after the write.
    await waitFor(
      async () => {
        const lease = await sql<{ expired: boolean }>`
          SELECT expires_at <= clock_timestamp() AS expired FROM session_leases WHERE session_id = ${sessionId}`.execute(database.db);
        return lease.rows[0]?.expired;
      },
      { what: 'the lease expired' },
    );
    const claim = claimLease(database.db, sessionId, 'challenger', 5000).then((lease) => {
      order.push('claim');
      return lease;
    });
    try {
      await waitForLockWait(database.db, 'the claim waiting for the write');
    } finally {
      finish.open();
    }
    await write;
    const challenger = await claim;
    expect(order).toEqual(['write', 'claim']);
    expect(challenger?.owner).toBe('challenger');
  });
});
