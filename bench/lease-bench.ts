import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { acceptInbound } from '@herald/inbox';
import { claimLease, fenced, releaseLease } from '@herald/leases';
import { createDb } from '@herald/db';
import { percentile } from './machine.ts';

export interface LeaseCost {
  claimReleaseP50: number;
  claimReleaseP99: number;
  fencedWriteP50: number;
  plainWriteP50: number;
}

/**
 * What the lease adds to a turn: one claim and one release, and a share lock plus token check at
 * the start of each fenced write (compared with the same write unfenced).
 */
export async function measureLeaseCost(databaseUrl: string, rounds = 400): Promise<LeaseCost> {
  const db = createDb({ url: databaseUrl, maxConnections: 2 });
  try {
    const accepted = await acceptInbound(db, {
      profileId: 'main',
      platform: 'api',
      chatType: 'dm',
      chatId: `lease-bench-${randomUUID()}`,
      userId: 'u',
      text: 'x',
    });
    const pairs: number[] = [];
    const fencedWrites: number[] = [];
    const plainWrites: number[] = [];
    const write = (trx: Parameters<Parameters<typeof fenced>[2]>[0]) => sql`UPDATE sessions SET updated_at = now() WHERE id = ${accepted.sessionId}`.execute(trx);
    for (let i = 0; i < rounds; i++) {
      let t = performance.now();
      const lease = await claimLease(db, accepted.sessionId, 'bench', 10_000);
      if (!lease) throw new Error('lease busy in the benchmark');
      await releaseLease(db, lease);
      pairs.push(performance.now() - t);
      const held = await claimLease(db, accepted.sessionId, 'bench', 10_000);
      if (!held) throw new Error('lease busy in the benchmark');
      t = performance.now();
      await fenced(db, held, write);
      fencedWrites.push(performance.now() - t);
      t = performance.now();
      await db.transaction().execute(write);
      plainWrites.push(performance.now() - t);
      await releaseLease(db, held);
    }
    return {
      claimReleaseP50: percentile(pairs, 50),
      claimReleaseP99: percentile(pairs, 99),
      fencedWriteP50: percentile(fencedWrites, 50),
      plainWriteP50: percentile(plainWrites, 50),
    };
  } finally {
    await db.destroy();
  }
}
