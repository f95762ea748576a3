import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { DEFAULT_ACCOUNT, DELIVERY_ONLY_FACTS, isChatPlatform, isDeliveryOnlyPlatform, parseUserId, PLATFORM_FACTS } from '@herald/core';
import type { CronTarget, Database } from '@herald/db';
import { describeTarget } from './cron-targets.ts';

// Who may deliver where (docs/security.md, "Where a cron job may deliver"): the one rule every way
// of creating or changing a job goes through (the cronjob tool, the API, the CLI, the import), so
// a person's job cannot post text they chose into a chat they have no part in.

/** Who names a job's targets: its owner, and whether they are an operator (HERALD_OPERATORS today; a role later). */
export interface TargetChooser {
  profileId: string;
  userId: string;
  operator: boolean;
  /** HERALD_MAIL_ALLOWED_DOMAINS (empty: any domain). Addresses outside it are refused to everyone. */
  addressAllowlist?: readonly string[] | undefined;
  /** The accounts each chat platform has here (platformAccountNames); unset: a named account is not checked. */
  accounts?: Readonly<Record<string, readonly string[]>> | undefined;
}

/**
 * Why a chat target naming an account may not be saved: the deployment has no such bot on that
 * platform, so the report could never leave. Refused when the job is saved, to everyone, rather
 * than failing at every run. A target naming no account takes the default one or the profile's
 * bound one (services/scheduler cron-completion.ts), which is not this rule's to decide.
 */
export function accountRefusal(chooser: TargetChooser, targets: readonly CronTarget[]): string | undefined {
  if (chooser.accounts === undefined) return undefined;
  for (const target of targets) {
    if ('url' in target || target.account === undefined || target.account === DEFAULT_ACCOUNT || !isChatPlatform(target.platform)) continue;
    const known = chooser.accounts[target.platform] ?? [];
    if (known.includes(target.account)) continue;
    const label = PLATFORM_FACTS[target.platform].label;
    const have = known.length === 0 ? `no ${label} account is configured` : `the ${label} accounts are ${known.join(', ')}`;
    return `${describeTarget(target)}: there is no ${label} account '${target.account}' here (${have}; HERALD_PLATFORMS_FILE names them)`;
  }
  return undefined;
}

/**
 * Why an address target may not be saved, or undefined when every one may: the deployment decides
 * where mail may go (HERALD_MAIL_ALLOWED_DOMAINS, issue 33), for operators and everyone else alike.
 * Unset, any address is allowed: a deployment whose agents talk to people it does not trust sets it
 * (docs/security.md).
 */
export function addressRefusal(chooser: TargetChooser, targets: readonly CronTarget[]): string | undefined {
  const allowlist = chooser.addressAllowlist ?? [];
  for (const target of targets) {
    if ('url' in target || !isDeliveryOnlyPlatform(target.platform)) continue;
    if (!DELIVERY_ONLY_FACTS[target.platform].addressAllowed(target.chatId, allowlist)) {
      return `${describeTarget(target)} is outside the allowed domains (HERALD_MAIL_ALLOWED_DOMAINS: ${allowlist.join(', ')})`;
    }
  }
  return undefined;
}

/** What a person is told when a target is not theirs to name; the job is not created or changed. */
export function targetRefusal(target: CronTarget): string {
  return `${describeTarget(target)} is not a chat you take part in: a job may deliver to the chats you write in ` + "(its origin, your DMs) or 'local'; anything else needs an operator";
}

/** A key's platform part: `telegram`, or `telegram@ops` for a chat on a named account (the chat must be on that bot). */
function platformPart(target: CronTarget & { chatId: string }): string {
  return 'account' in target && target.account !== undefined && target.account !== DEFAULT_ACCOUNT ? `${target.platform}@${target.account}` : target.platform;
}

/** Whether `target` is a chat the person wrote in, in this profile (inbound_events.chat_key, migration 0044). */
async function writesIn(db: Kysely<Database> | Transaction<Database>, chooser: TargetChooser, target: CronTarget & { chatId: string }): Promise<boolean> {
  // Past `agent:<profile>:` a route key reads <platform>[@<account>]:<chat_type>:<chat_id>[:<thread_id>] (libs/session/src/session-key.ts).
  const rest = sql`substr(e.chat_key, length(${`agent:${chooser.profileId}:`}) + 1)`;
  const found = await sql`
    SELECT 1 FROM inbound_events e
    WHERE e.user_id = ${chooser.userId} AND e.chat_key LIKE ${`agent:${chooser.profileId.replace(/[\\%_]/g, '\\$&')}:%`}
      AND split_part(${rest}, ':', 1) = ${platformPart(target)} AND split_part(${rest}, ':', 3) = ${target.chatId}
    LIMIT 1`.execute(db);
  return found.rows.length > 0;
}

/** Where a DM's chat id is the person's own id, their DM is theirs before they first write in it. */
function ownDm(chooser: TargetChooser, target: CronTarget & { chatId: string }): boolean {
  const person = parseUserId(chooser.userId);
  if (person === undefined || person.platform !== target.platform || !isChatPlatform(target.platform)) return false;
  return PLATFORM_FACTS[target.platform].dmChatIdIsUserId && person.id === target.chatId;
}

/**
 * The first of `targets` the chooser may not name, or undefined when all are theirs: an operator
 * may name any; anyone else only chats they take part in. A webhook is no chat: operators only.
 */
export async function refusedTarget(db: Kysely<Database> | Transaction<Database>, chooser: TargetChooser, targets: readonly CronTarget[]): Promise<CronTarget | undefined> {
  if (chooser.operator) return undefined;
  for (const target of targets) {
    if ('url' in target) return target;
    // Addresses are no chats: addressRefusal decides them.
    if (isDeliveryOnlyPlatform(target.platform)) continue;
    if (ownDm(chooser, target)) continue;
    if (!(await writesIn(db, chooser, target))) return target;
  }
  return undefined;
}
