import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { QuotaConfig } from '@herald/core';
import type { Database } from '@herald/db';
import { recordQuotaRefusal } from '@herald/telemetry';
import { limitPassed, limitsArgument } from './limit-refusal.ts';

/** Who sends a message with files, and where: what a refusal's audit entry names. */
export interface FilesSender {
  userId: string;
  profileId: string;
  platform: string;
  chatId: string;
}

/** Throws LimitExceededError when files of this many bytes would take the day past an allowance. */
export type FilesAdmission = (bytes: number) => Promise<void>;

/**
 * The check a message's files pass before a byte of them is stored (takeMessageFiles' `admit`):
 * the person's and everyone's daily attachment allowance (HERALD_LIMIT_ATTACHMENT_MB_PER_DAY and
 * its global sibling), counted by herald_check_limits like every other limit. A refusal is counted
 * in the metric and the audit trail here, since no accepting call runs to record it; the accepting
 * call checks again under the person's lock, so two messages racing past this check cannot both
 * be taken (docs/decisions/2026-12-06-attachment-allowance.md).
 */
export function filesAdmission(db: Kysely<Database>, sender: FilesSender, limits: QuotaConfig | undefined): FilesAdmission {
  return async (bytes) => {
    if (limits === undefined || bytes <= 0) return;
    const only: QuotaConfig = {
      turnsPerMinute: 0,
      globalTurnsPerMinute: 0,
      concurrentTurns: 0,
      globalConcurrentTurns: 0,
      tokensPerDay: 0,
      globalTokensPerDay: 0,
      attachmentBytesPerDay: limits.attachmentBytesPerDay,
      globalAttachmentBytesPerDay: limits.globalAttachmentBytesPerDay,
    };
    const refusal = await limitPassed(db, sender.userId, limitsArgument(only, undefined, bytes));
    if (refusal === undefined) return;
    await sql`SELECT herald_audit_refusal(${sender.userId}, ${sender.profileId}, NULL::uuid, ${refusal.limit},
      ${refusal.retryAfterSeconds}::integer, ${sender.platform}, ${sender.chatId})`.execute(db);
    recordQuotaRefusal(refusal.limit);
    throw refusal;
  };
}

/**
 * Adds an accepted message's files to its author's day (usage_days.attachment_bytes), in the
 * transaction that accepts it and under the person's lock herald_check_limits took there.
 */
export async function countAttachmentBytes(trx: Transaction<Database>, userId: string, bytes: number): Promise<void> {
  if (bytes <= 0) return;
  await sql`INSERT INTO usage_days AS u (day, user_id, attachment_bytes)
    VALUES ((clock_timestamp() AT TIME ZONE 'UTC')::date, ${userId}, ${bytes})
    ON CONFLICT (day, user_id) DO UPDATE SET attachment_bytes = u.attachment_bytes + EXCLUDED.attachment_bytes`.execute(trx);
}
