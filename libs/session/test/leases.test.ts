import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { acceptInbound, appendMessages, claimLease, fenced, LeaseLostError, releaseLease, renewLease } from '@herald/session';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import type { TestDatabase } from '../../../test/support/test-database.ts';

describe('session leases', () => {
  let database: TestDatabase;
  let sessionId: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    const accepted = await acceptInbound(database.db, {
      profileId: 'main',
      platform: 'api',
      chatType: 'dm',
      chatId: 'lease',
      userId: 'u',
      text: 'hi',
    });
    sessionId = accepted.sessionId;
  });
  afterAll(async () => {
    await database.drop();
  });

  it('admits one holder at a time and grows the token on every claim', async () => {
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => claimLease(database.db, sessionId, `w${i}`, 5000)),
    );
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
    await sql`UPDATE session_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = ${sessionId}`.execute(
      database.db,
    );
    expect(await renewLease(database.db, stale, 5000)).toBe(false);
    const fresh = (await claimLease(database.db, sessionId, 'fresh', 5000))!;
    expect(fresh).toBeDefined();
    await expect(
      fenced(database.db, stale, (trx) => appendMessages(trx, sessionId, null, [{ role: 'assistant', content: 'late write' }])),
    ).rejects.toSatisfy(LeaseLostError.isInstance);
    await fenced(database.db, fresh, (trx) => appendMessages(trx, sessionId, null, [{ role: 'assistant', content: 'current' }]));
    const rows = await database.db.selectFrom('messages').select('content').where('session_id', '=', sessionId).execute();
    expect(rows.map((r) => r.content)).toEqual(['current']);
    await releaseLease(database.db, fresh);
  });

  it('makes a competing claim wait for a fenced write in progress', async () => {
    const holder = (await claimLease(database.db, sessionId, 'holder', 300))!;
    const order: string[] = [];
    const write = fenced(database.db, holder, async (trx) => {
      await sql`SELECT pg_sleep(0.6)`.execute(trx);
      await appendMessages(trx, sessionId, null, [{ role: 'assistant', content: 'inside the lease' }]);
      order.push('write');
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The lease has expired by now, but the write holds the row: the claim must wait for it.
    const claim = claimLease(database.db, sessionId, 'challenger', 5000).then((lease) => {
      order.push('claim');
      return lease;
    });
    await write;
    const challenger = await claim;
    expect(order).toEqual(['write', 'claim']);
    expect(challenger?.owner).toBe('challenger');
  });
});
