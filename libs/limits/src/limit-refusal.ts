import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import type { BudgetDefaults, QuotaConfig } from '@herald/core';
import type { BudgetPeriod, BudgetScope } from '@herald/db';

/** The limits herald_check_limits counts, by the names it returns (and the metric's label). */
type CountedLimit = 'turns_per_minute' | 'global_turns_per_minute' | 'concurrent_turns' | 'global_concurrent_turns' | 'tokens_per_day' | 'global_tokens_per_day' | 'attachments' | 'global_attachments';

/** Every limit a message can be refused by: the counted ones, and `budget` for the money budgets. */
export type LimitName = CountedLimit | 'budget';

/** Which money budget refused: the SQL names it `budget:<scope>:<period>` (herald_budget_status). */
export interface BudgetRef {
  scope: BudgetScope;
  period: BudgetPeriod;
}

const REASONS: Record<CountedLimit, (wait: string) => string> = {
  turns_per_minute: (wait) => `You have sent as many messages this minute as this Herald allows one person; send it again in ${wait}.`,
  global_turns_per_minute: (wait) => `Herald is taking as many messages this minute as it is allowed to; send it again in ${wait}.`,
  concurrent_turns: () => 'You already have as many requests in progress as this Herald allows one person; send it again once one is answered.',
  global_concurrent_turns: (wait) => `Herald is working on as many requests as it is allowed to at once; send it again in ${wait}.`,
  tokens_per_day: (wait) => `You have used today's model budget for one person; it renews at midnight UTC, in ${wait}.`,
  global_tokens_per_day: (wait) => `Herald has used today's model budget; it renews at midnight UTC, in ${wait}.`,
  attachments: (wait) => `You have sent as many files today as this Herald allows one person; messages without files still go through, and files again at midnight UTC, in ${wait}.`,
  global_attachments: (wait) => `Herald has taken in as many files today as it is allowed to; messages without files still go through, and files again at midnight UTC, in ${wait}.`,
};

const BUDGET_REASONS: Record<BudgetScope, Record<BudgetPeriod, (wait: string) => string>> = {
  person: {
    day: (wait) => `You have spent today's model budget for one person; it renews at midnight UTC, in ${wait}.`,
    month: (wait) => `You have spent this month's model budget for one person; it renews on the 1st (UTC), in ${wait}.`,
  },
  profile: {
    day: (wait) => `This agent has spent today's model budget; it renews at midnight UTC, in ${wait}.`,
    month: (wait) => `This agent has spent this month's model budget; it renews on the 1st (UTC), in ${wait}.`,
  },
};

/** `budget:person:day` as the SQL names a budget, or undefined for any other name. */
export function parseBudgetName(name: string): BudgetRef | undefined {
  const match = /^budget:(person|profile):(day|month)$/.exec(name);
  return match ? { scope: match[1] as BudgetScope, period: match[2] as BudgetPeriod } : undefined;
}

export function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.ceil((seconds % 3600) / 60)} min`;
}

/** A message refused by a limit: nothing was stored, and the person is told why and when to retry. */
export class LimitExceededError extends Error {
  override readonly name = 'LimitExceededError';
  readonly limit: LimitName;
  readonly retryAfterSeconds: number;
  /** Set when `limit` is 'budget': which one. */
  readonly budget: BudgetRef | undefined;
  /** `name` as herald_check_limits or herald_budget_status returns it. */
  constructor(name: string, retryAfterSeconds: number) {
    const budget = parseBudgetName(name);
    const wait = duration(retryAfterSeconds);
    super(`Not taken: ${budget ? BUDGET_REASONS[budget.scope][budget.period](wait) : REASONS[name as CountedLimit](wait)}`);
    this.limit = budget ? 'budget' : (name as CountedLimit);
    this.budget = budget;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Only the token limits, as herald_check_limits takes them: what is checked before each model call. */
export function tokenLimitsArgument(limits: QuotaConfig | undefined): string | null {
  if (limits === undefined) return null;
  return limitsArgument({ ...limits, turnsPerMinute: 0, globalTurnsPerMinute: 0, concurrentTurns: 0, globalConcurrentTurns: 0, attachmentBytesPerDay: 0, globalAttachmentBytesPerDay: 0 });
}

/**
 * The configured limits as herald_check_limits takes them: positive ones only, with the budgets'
 * defaults under `budgets` for herald_budget_status; null (nothing limited, budgets included, as
 * for a scheduled run) when no limit is on and no budgets are given. `attachmentBytes`, the size
 * of the message's files, goes along as `attachment_bytes` when an attachment allowance is on.
 */
export function limitsArgument(limits: QuotaConfig | undefined, budgets?: BudgetDefaults, attachmentBytes = 0): string | null {
  const on: Record<string, unknown> = {};
  // With budgets given the argument is never null: the budgets table's rows apply without defaults.
  if (budgets !== undefined) on['budgets'] = budgetsArgument(budgets);
  if (limits === undefined) return Object.keys(on).length === 0 ? null : JSON.stringify(on);
  // By herald_check_limits' keys: a limit's own name, the allowances' theirs in bytes.
  const named: Record<Exclude<CountedLimit, 'attachments' | 'global_attachments'> | 'attachment_bytes_per_day' | 'global_attachment_bytes_per_day', number> = {
    turns_per_minute: limits.turnsPerMinute,
    global_turns_per_minute: limits.globalTurnsPerMinute,
    concurrent_turns: limits.concurrentTurns,
    global_concurrent_turns: limits.globalConcurrentTurns,
    tokens_per_day: limits.tokensPerDay,
    global_tokens_per_day: limits.globalTokensPerDay,
    attachment_bytes_per_day: limits.attachmentBytesPerDay,
    global_attachment_bytes_per_day: limits.globalAttachmentBytesPerDay,
  };
  for (const [name, value] of Object.entries(named)) if (value > 0) on[name] = value;
  const allowance = limits.attachmentBytesPerDay > 0 || limits.globalAttachmentBytesPerDay > 0;
  if (allowance && attachmentBytes > 0) on['attachment_bytes'] = attachmentBytes;
  return Object.keys(on).length === 0 ? null : JSON.stringify(on);
}

/**
 * The first limit `userId` is past, counted by herald_check_limits, or undefined: what delegated
 * children and each model call are checked against (docs/decisions/2026-12-05-delegated-limits.md).
 */
export async function limitPassed(db: Kysely<Database> | Transaction<Database>, userId: string, limits: string | null): Promise<LimitExceededError | undefined> {
  if (limits === null) return undefined;
  const row = (await sql<{ limit_name: string; retry_after: number }>`SELECT * FROM herald_check_limits(${userId}, ${limits}::jsonb)`.execute(db)).rows[0];
  return row === undefined ? undefined : new LimitExceededError(row.limit_name, row.retry_after);
}

/** HERALD_BUDGET_* as herald_budget_status takes them. */
export function budgetsArgument(budgets: BudgetDefaults | undefined): Record<string, number> {
  return {
    person_day: budgets?.personDay ?? 0,
    person_month: budgets?.personMonth ?? 0,
    profile_day: budgets?.profileDay ?? 0,
    profile_month: budgets?.profileMonth ?? 0,
  };
}
