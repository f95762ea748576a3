import { sql } from 'kysely';
import type { Kysely, RawBuilder, Transaction } from 'kysely';
import type { BudgetDefaults } from '@herald/core';
import type { Database } from '@herald/db';
import { budgetStates, formatUsd } from './budgets.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** What usage can be grouped by (GET /v1/usage?group_by=, `herald usage --by`). */
export const USAGE_GROUPS = ['person', 'profile', 'model', 'day', 'kind'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/**
 * The SQL of each grouping. A person is herald_usage_person of the identity the call counts for:
 * the one place identities map to people. Calls recorded before usage was priced have no person.
 */
const GROUP_SQL: Record<UsageGroup, string> = {
  person: "coalesce(herald_usage_person(m.user_id), '')",
  profile: 'coalesce(m.profile_id, s.profile_id)',
  model: "m.provider || '/' || m.model",
  day: "to_char((m.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')",
  // What the call was for: a turn's own, a background review or a compression's summary.
  kind: 'm.kind',
};

export interface UsageTotals {
  calls: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** Calls of models without a price (counted at 0). */
  unknown_price_calls: number;
}

export type UsageRow = Partial<Record<UsageGroup, string>> & UsageTotals;

export interface UsageQuery {
  groupBy: readonly UsageGroup[];
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  /** Only this person's calls (their person key, or an identity mapped to it). */
  person?: string | undefined;
  /** Only these profiles' calls. */
  profiles?: readonly string[] | undefined;
}

const TOTALS = sql.raw(`count(*)::bigint AS calls, coalesce(sum(m.input_tokens), 0)::bigint AS input_tokens,
  coalesce(sum(m.cached_input_tokens), 0)::bigint AS cached_input_tokens, coalesce(sum(m.output_tokens), 0)::bigint AS output_tokens,
  coalesce(sum(m.cost_usd), 0) AS cost_usd, count(*) FILTER (WHERE NOT m.price_known)::bigint AS unknown_price_calls`);

function totalsOf(row: Record<string, unknown>): UsageTotals {
  return {
    calls: Number(row['calls']),
    input_tokens: Number(row['input_tokens']),
    cached_input_tokens: Number(row['cached_input_tokens']),
    output_tokens: Number(row['output_tokens']),
    cost_usd: Number(row['cost_usd']),
    unknown_price_calls: Number(row['unknown_price_calls']),
  };
}

function whereOf(query: UsageQuery): RawBuilder<unknown> {
  const person = query.person === undefined ? sql`` : sql`AND herald_usage_person(m.user_id) = herald_usage_person(${query.person})`;
  const profiles = query.profiles === undefined ? sql`` : sql`AND s.profile_id = ANY(${[...query.profiles]}::text[])`;
  return sql`WHERE m.created_at >= ${query.from} AND m.created_at < ${query.to} ${person} ${profiles}`;
}

/** Tokens and cost of the model calls in [from, to), grouped; with the totals of them all. */
export async function usageReport(db: Executor, query: UsageQuery): Promise<{ rows: UsageRow[]; total: UsageTotals }> {
  const groups = [...new Set(query.groupBy)];
  const columns = groups.map((group) => `${GROUP_SQL[group]} AS "${group}"`).join(', ');
  const keys = groups.map((_, index) => String(index + 1)).join(', ');
  const from = sql`FROM model_calls m JOIN sessions s ON s.id = m.session_id ${whereOf(query)}`;
  const total = (await sql<Record<string, unknown>>`SELECT ${TOTALS} ${from}`.execute(db)).rows[0] ?? {};
  if (groups.length === 0) return { rows: [], total: totalsOf(total) };
  const order = groups.includes('day') ? sql.raw(keys) : sql.raw(`cost_usd DESC, ${keys}`);
  const rows = await sql<Record<string, unknown>>`SELECT ${sql.raw(columns)}, ${TOTALS} ${from} GROUP BY ${sql.raw(keys)} ORDER BY ${order}`.execute(db);
  return {
    rows: rows.rows.map((row) => ({ ...Object.fromEntries(groups.map((group) => [group, String(row[group])])), ...totalsOf(row) })),
    total: totalsOf(total),
  };
}

/** Midnight UTC of `date`'s day, and of the first of its month. */
export function utcDayStart(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}
export function utcMonthStart(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}

function usageLine(label: string, totals: UsageTotals): string {
  const tokens = `${totals.input_tokens.toLocaleString('en-US')} in (${totals.cached_input_tokens.toLocaleString('en-US')} cached), ${totals.output_tokens.toLocaleString('en-US')} out`;
  const unknown = totals.unknown_price_calls > 0 ? ` (${totals.unknown_price_calls} call${totals.unknown_price_calls === 1 ? '' : 's'} of models without a price)` : '';
  return `${label}: ${formatUsd(totals.cost_usd)}, ${totals.calls} model call${totals.calls === 1 ? '' : 's'}, ${tokens} tokens${unknown}.`;
}

/** The /usage reply: the person's own today and this month (UTC), and the budgets that apply here. */
export async function usageReply(db: Executor, userId: string, profileId: string, budgets: BudgetDefaults | undefined, now = new Date()): Promise<string> {
  const end = new Date(utcDayStart(now).getTime() + 86_400_000);
  const today = await usageReport(db, { groupBy: [], from: utcDayStart(now), to: end, person: userId });
  const month = await usageReport(db, { groupBy: [], from: utcMonthStart(now), to: end, person: userId });
  const lines = [usageLine('Today (UTC)', today.total), usageLine('This month', month.total)];
  for (const state of await budgetStates(db, userId, profileId, budgets)) {
    const whose = state.scope === 'person' ? 'Your' : `This agent's (${state.subject})`;
    lines.push(`${whose} budget for ${state.period === 'day' ? 'today' : 'this month'}: ${formatUsd(state.spentUsd)} of ${formatUsd(state.budgetUsd)} spent.`);
  }
  return lines.join('\n');
}
