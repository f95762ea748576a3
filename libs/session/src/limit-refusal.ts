import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import type { QuotaConfig } from '@herald/core';

/** The limits herald_check_limits counts, by the names it returns (and the metric's label). */
export type LimitName =
  | 'turns_per_minute'
  | 'global_turns_per_minute'
  | 'concurrent_turns'
  | 'global_concurrent_turns'
  | 'tokens_per_day'
  | 'global_tokens_per_day';

const REASONS: Record<LimitName, (wait: string) => string> = {
  turns_per_minute: (wait) => `You have sent as many messages this minute as this Herald allows one person; send it again in ${wait}.`,
  global_turns_per_minute: (wait) => `Herald is taking as many messages this minute as it is allowed to; send it again in ${wait}.`,
  concurrent_turns: () => 'You already have as many requests in progress as this Herald allows one person; send it again once one is answered.',
  global_concurrent_turns: (wait) => `Herald is working on as many requests as it is allowed to at once; send it again in ${wait}.`,
  tokens_per_day: (wait) => `You have used today's model budget for one person; it renews at midnight UTC, in ${wait}.`,
  global_tokens_per_day: (wait) => `Herald has used today's model budget; it renews at midnight UTC, in ${wait}.`,
};

function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.ceil((seconds % 3600) / 60)} min`;
}

/** A message refused by a limit: nothing was stored, and the person is told why and when to retry. */
export class LimitExceededError extends Error {
  override readonly name = 'LimitExceededError';
  readonly limit: LimitName;
  readonly retryAfterSeconds: number;
  constructor(limit: LimitName, retryAfterSeconds: number) {
    super(`Not taken: ${REASONS[limit](duration(retryAfterSeconds))}`);
    this.limit = limit;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Only the token limits, as herald_check_limits takes them: what is checked before each model call. */
export function tokenLimitsArgument(limits: QuotaConfig | undefined): string | null {
  if (limits === undefined) return null;
  return limitsArgument({ ...limits, turnsPerMinute: 0, globalTurnsPerMinute: 0, concurrentTurns: 0, globalConcurrentTurns: 0 });
}

/** The configured limits as herald_check_limits takes them: positive ones only; null when none is on. */
export function limitsArgument(limits: QuotaConfig | undefined): string | null {
  if (limits === undefined) return null;
  const on: Record<string, number> = {};
  const named: Record<LimitName, number> = {
    turns_per_minute: limits.turnsPerMinute,
    global_turns_per_minute: limits.globalTurnsPerMinute,
    concurrent_turns: limits.concurrentTurns,
    global_concurrent_turns: limits.globalConcurrentTurns,
    tokens_per_day: limits.tokensPerDay,
    global_tokens_per_day: limits.globalTokensPerDay,
  };
  for (const [name, value] of Object.entries(named)) if (value > 0) on[name] = value;
  return Object.keys(on).length === 0 ? null : JSON.stringify(on);
}

/**
 * The first limit `userId` is past, counted by herald_check_limits, or undefined: what delegated
 * children and each model call are checked against (docs/decisions/2026-12-05-delegated-limits.md).
 */
export async function limitPassed(db: Kysely<Database> | Transaction<Database>, userId: string, limits: string | null): Promise<LimitExceededError | undefined> {
  if (limits === null) return undefined;
  const row = (await sql<{ limit_name: LimitName; retry_after: number }>`SELECT * FROM herald_check_limits(${userId}, ${limits}::jsonb)`.execute(db)).rows[0];
  return row === undefined ? undefined : new LimitExceededError(row.limit_name, row.retry_after);
}
