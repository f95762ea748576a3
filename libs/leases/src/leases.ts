import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { recordFencingRejection, recordLeaseClaim } from '@herald/telemetry';
import { INBOX_LIMIT, inboxOf } from './open-inbox.ts';
import type { Inbox, InboxEntry } from './open-inbox.ts';

export interface Lease {
  sessionId: string;
  owner: string;
  /** Fencing token: grows on every claim, so a stale holder's writes can be refused. */
  token: string;
  /** The wake generation this claim started (bumped in the same transaction). */
  wakeGeneration: string;
  /** The previous holder never released the lease: it died or stalled mid-drain. */
  tookOver: boolean;
}

const marker = Symbol.for('herald.lease-lost');

/** The holder's lease expired or was taken over; the turn must stop without writing. */
export class LeaseLostError extends Error {
  readonly [marker] = true;
  override readonly name = 'LeaseLostError';
  constructor(sessionId: string) {
    super(`lease on session ${sessionId} was lost`);
  }
  static isInstance(value: unknown): value is LeaseLostError {
    return typeof value === 'object' && value !== null && marker in value;
  }
}

/** What a worker needs of the session to run it, read in the same round trip as the claim. */
export interface LeasedSession {
  profileId: string;
  platform: string;
  /** 'dm', 'group'...: whether the session's prompt may carry one person's memory. */
  chatType: string;
  identity: string;
  /** The person who started the session: whose user profile goes into the prompt. */
  originUserId: string | null;
  /** Null until the first turn stores it; the runner fills it in for the rest of the drain. */
  systemPrompt: string | null;
  /** The profile's tool policy as stored (validated by the tools library where it is used). */
  toolPolicy: Record<string, unknown>;
}

/**
 * Claims the session's lease if it is free or expired; returns undefined when a live holder has it.
 * The claim also bumps `wake_generation` (under the session row lock that ingress takes), which is
 * what makes a message arriving during this drain get its own wake-up job. The inbox comes back
 * with the claim: herald_open_inbox runs after the bump (a LATERAL on its row) with a snapshot of
 * its own, so it sees every message whose wake-up this claim might have absorbed. One statement,
 * migrations/functions/herald_claim_lease.sql.
 */
export async function claimLease(db: Kysely<Database>, sessionId: string, owner: string, ttlMs: number): Promise<(Lease & { session: LeasedSession; inbox: Inbox }) | undefined> {
  const claimed = await sql<
    InboxEntry & {
      token: string;
      took_over: boolean | null;
      wake_generation: string;
      system_prompt: string | null;
      platform: string;
      chat_type: string;
      profile_id: string;
      origin_user_id: string | null;
      identity: string;
      tool_policy: Record<string, unknown>;
    }
  >`SELECT * FROM herald_claim_lease(${sessionId}::uuid, ${owner}, ${ttlMs}::bigint, ${INBOX_LIMIT}::integer)`.execute(db);
  const row = claimed.rows[0];
  recordLeaseClaim(!row ? 'busy' : row.took_over === true ? 'taken_over' : 'claimed');
  if (!row) return undefined;
  const { queueMode, events } = inboxOf(claimed.rows);
  return {
    inbox: { queueMode, events },
    sessionId,
    owner,
    token: String(row.token),
    wakeGeneration: String(row.wake_generation),
    tookOver: row.took_over === true,
    session: {
      profileId: row.profile_id,
      platform: row.platform,
      chatType: row.chat_type,
      identity: row.identity,
      originUserId: row.origin_user_id,
      systemPrompt: row.system_prompt,
      toolPolicy: row.tool_policy,
    },
  };
}

/** Extends the lease; false when it was lost (expired and claimed by someone else). */
export async function renewLease(db: Kysely<Database>, lease: Lease, ttlMs: number): Promise<boolean> {
  const result = await sql`
    UPDATE session_leases SET expires_at = clock_timestamp() + ${ttlMs} * interval '1 millisecond'
    WHERE session_id = ${lease.sessionId} AND token = ${lease.token} AND expires_at > clock_timestamp()`.execute(db);
  return Number(result.numAffectedRows ?? 0) === 1;
}

export async function releaseLease(db: Kysely<Database>, lease: Lease): Promise<void> {
  await sql`
    UPDATE session_leases SET expires_at = clock_timestamp(), released = true
    WHERE session_id = ${lease.sessionId} AND token = ${lease.token}`.execute(db);
}

/**
 * Runs `fn` in a transaction that first takes a share lock on the lease row and checks the token.
 * A competing claim must lock the same row, so it waits for this transaction: a write either lands
 * while the lease is ours or is refused with LeaseLostError.
 */
export async function fenced<T>(db: Kysely<Database>, lease: Lease, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const held = await sql<{ ok: boolean }>`SELECT herald_lease_held(${lease.sessionId}::uuid, ${lease.token}::bigint) AS ok`.execute(trx);
    if (held.rows[0]?.ok !== true) {
      recordFencingRejection();
      throw new LeaseLostError(lease.sessionId);
    }
    return fn(trx);
  });
}
