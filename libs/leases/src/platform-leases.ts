import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/**
 * A named cluster-wide lease for a long-lived platform connection (a Telegram poller per bot token,
 * a Discord gateway shard): free or expired rows are taken over, a live holder keeps it by renewing.
 * Returns the fencing token, or undefined when someone else holds it.
 */
export async function acquirePlatformLease(db: Kysely<Database>, name: string, owner: string, ttlMs: number): Promise<string | undefined> {
  const result = await sql<{ token: string }>`
    INSERT INTO platform_leases (name, owner, token, expires_at)
    VALUES (${name}, ${owner}, 1, clock_timestamp() + ${ttlMs} * interval '1 millisecond')
    ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, token = platform_leases.token + 1,
                                     expires_at = excluded.expires_at
      WHERE platform_leases.expires_at < clock_timestamp()
    RETURNING token`.execute(db);
  return result.rows[0]?.token;
}

export async function renewPlatformLease(db: Kysely<Database>, name: string, owner: string, token: string, ttlMs: number): Promise<boolean> {
  const result = await sql`
    UPDATE platform_leases SET expires_at = clock_timestamp() + ${ttlMs} * interval '1 millisecond'
    WHERE name = ${name} AND owner = ${owner} AND token = ${token}::bigint AND expires_at > clock_timestamp()`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

export async function releasePlatformLease(db: Kysely<Database>, name: string, owner: string, token: string): Promise<void> {
  await sql`
    UPDATE platform_leases SET expires_at = clock_timestamp()
    WHERE name = ${name} AND owner = ${owner} AND token = ${token}::bigint`.execute(db);
}
