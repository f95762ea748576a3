import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { isChatPlatform } from '@herald/core';
import type { BudgetDefaults } from '@herald/core';
import type { BudgetPeriod, BudgetScope, Database, ProfileCache } from '@herald/db';
import { enqueueOutbound } from '@herald/delivery';
import { budgetsArgument, LimitExceededError } from './limit-refusal.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** The share of a budget at which the person is warned, once per budget and period. */
export const BUDGET_WARNING_SHARE = 0.8;

/** One budget that applies, with what is spent against it (herald_budget_status). */
export interface BudgetState {
  scope: BudgetScope;
  subject: string;
  period: BudgetPeriod;
  periodStart: string;
  budgetUsd: number;
  spentUsd: number;
  retryAfterSeconds: number;
}

/** A budgets row: NULL keeps the HERALD_BUDGET_* default, 0 turns that budget off. */
export interface BudgetRow {
  scope: BudgetScope;
  subject: string;
  perDayUsd: number | null;
  perMonthUsd: number | null;
  updatedAt: Date;
}

/** Dollars as a person reads them: cents from a dollar on, two significant digits below it ($0.0085). */
export function formatUsd(amount: number): string {
  return amount >= 1 || amount === 0 ? `$${amount.toFixed(2)}` : `$${Number(amount.toPrecision(2))}`;
}

/** The budgets that apply to `userId` in `profileId` (none: nothing is on), and what each has spent. */
export async function budgetStates(db: Executor, userId: string, profileId: string | null, defaults: BudgetDefaults | undefined): Promise<BudgetState[]> {
  const rows = await sql<{ scope: BudgetScope; subject: string; period: BudgetPeriod; period_start: Date | string; budget: string; spent: string; retry_after: number }>`
    SELECT * FROM herald_budget_status(${userId}, ${profileId}::text, ${JSON.stringify(budgetsArgument(defaults))}::jsonb)`.execute(db);
  return rows.rows.map((row) => ({
    scope: row.scope,
    subject: row.subject,
    period: row.period,
    periodStart: typeof row.period_start === 'string' ? row.period_start : row.period_start.toISOString().slice(0, 10),
    budgetUsd: Number(row.budget),
    spentUsd: Number(row.spent),
    retryAfterSeconds: row.retry_after,
  }));
}

/**
 * Whether any money budget can apply to anyone: a HERALD_BUDGET_* default above 0, or a budgets row
 * with an amount above 0. Kept in the process's profile cache (dropped when the budgets table
 * changes, migrations/0088_shared_cache_notices.sql), so a deployment without budgets pays no round
 * trip for them before and after each model call.
 */
export async function budgetsOn(db: Executor, defaults: BudgetDefaults | undefined, cache: ProfileCache): Promise<boolean> {
  if (Object.values(budgetsArgument(defaults)).some((amount) => amount > 0)) return true;
  return cache.shared('budgets:on', async () => {
    const row = await db
      .selectFrom('budgets')
      .select('scope')
      .where((eb) => eb.or([eb('per_day', '>', '0'), eb('per_month', '>', '0')]))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  });
}

/** Budgets may apply to this context's calls: always without a cache (read them), else budgetsOn. */
async function mayApply(db: Executor, context: WarningContext): Promise<boolean> {
  return context.profiles === undefined || budgetsOn(db, context.budgets, context.profiles);
}

/** The spent budget that renews last, as the refusal names it, or undefined. */
function firstSpent(states: readonly BudgetState[]): LimitExceededError | undefined {
  const spent = states.filter((state) => state.spentUsd >= state.budgetUsd);
  // On the month's last day both renew at midnight: the month's is the one to name.
  spent.sort((a, b) => b.retryAfterSeconds - a.retryAfterSeconds || (a.period === 'month' ? -1 : 0) - (b.period === 'month' ? -1 : 0));
  const first = spent[0];
  return first ? new LimitExceededError(`budget:${first.scope}:${first.period}`, first.retryAfterSeconds) : undefined;
}

/** The first budget `userId` has spent in `profileId` (the one that renews last), or undefined. */
export async function budgetPassed(db: Executor, userId: string, profileId: string, defaults: BudgetDefaults | undefined): Promise<LimitExceededError | undefined> {
  return firstSpent(await budgetStates(db, userId, profileId, defaults));
}

/**
 * Before a model call, in one read of the budgets: the 80% warnings due (warnBudgets), and the
 * spent budget that stops the call, if any.
 */
export async function checkBudgets(db: Kysely<Database>, context: WarningContext): Promise<LimitExceededError | undefined> {
  if (!(await mayApply(db, context))) return undefined;
  const states = await budgetStates(db, context.userId, context.profileId, context.budgets);
  await warnDue(db, context, states);
  return firstSpent(states);
}

function warningLine(state: BudgetState): string {
  const whose = state.scope === 'person' ? 'your' : `this agent's (${state.subject})`;
  const when = state.period === 'day' ? 'today' : 'this month';
  const share = Math.round((state.spentUsd / state.budgetUsd) * 100);
  return `Heads-up: ${whose} model budget for ${when} is ${share}% spent (${formatUsd(state.spentUsd)} of ${formatUsd(state.budgetUsd)}).`;
}

/** Where a turn's warning goes: its session and the person it counts for. */
export interface WarningContext {
  userId: string;
  profileId: string;
  sessionId: string;
  turnId: string;
  budgets: BudgetDefaults | undefined;
  /** The process's profile cache: with it, no budget is read while none is on (budgetsOn). */
  profiles?: ProfileCache | undefined;
}

/**
 * Warns the person once per budget and period when a budget reaches 80%: a budget_warnings row
 * (its key is the "once"; the API shows it on the turn's event) and, in a chat, one message through
 * the outbox, in the same transaction. Returns the lines written now (none when already warned).
 */
export async function warnBudgets(db: Kysely<Database>, context: WarningContext): Promise<string[]> {
  if (!(await mayApply(db, context))) return [];
  return warnDue(db, context, await budgetStates(db, context.userId, context.profileId, context.budgets));
}

async function warnDue(db: Kysely<Database>, context: WarningContext, states: readonly BudgetState[]): Promise<string[]> {
  const due = states.filter((state) => state.spentUsd >= state.budgetUsd * BUDGET_WARNING_SHARE);
  if (due.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const lines: string[] = [];
    const keys: string[] = [];
    for (const state of due) {
      const text = warningLine(state);
      const inserted = await trx
        .insertInto('budget_warnings')
        .values({
          scope: state.scope,
          subject: state.subject,
          period: state.period,
          period_start: state.periodStart,
          user_id: context.userId,
          session_id: context.sessionId,
          turn_id: context.turnId,
          text,
        })
        .onConflict((oc) => oc.columns(['scope', 'subject', 'period', 'period_start']).doNothing())
        .returning('text')
        .executeTakeFirst();
      if (!inserted) continue;
      lines.push(inserted.text);
      keys.push(`${state.scope}:${state.subject}:${state.period}:${state.periodStart}`);
    }
    if (lines.length > 0) await warnInChat(trx, context, lines, `budget-warning:${keys.join(',')}`);
    return lines;
  });
}

async function warnInChat(trx: Transaction<Database>, context: WarningContext, lines: string[], key: string): Promise<void> {
  const session = await trx.selectFrom('sessions').select(['platform', 'chat_id', 'chat_type', 'thread_id']).where('id', '=', context.sessionId).executeTakeFirst();
  if (!session || !isChatPlatform(session.platform)) return;
  await enqueueOutbound(trx, {
    idempotencyKey: key,
    platform: session.platform,
    target: { chatId: session.chat_id, chatType: session.chat_type, ...(session.thread_id ? { threadId: session.thread_id } : {}) },
    text: lines.join('\n'),
    sessionId: context.sessionId,
    source: 'budget',
  });
}

/** The budget warnings given on a turn (the API shows them on its event). */
export async function turnWarnings(db: Executor, turnId: string): Promise<string[]> {
  const rows = await db.selectFrom('budget_warnings').select('text').where('turn_id', '=', turnId).orderBy('created_at').execute();
  return rows.map((row) => row.text);
}

const toRow = (row: { scope: BudgetScope; subject: string; per_day: string | null; per_month: string | null; updated_at: Date }): BudgetRow => ({
  scope: row.scope,
  subject: row.subject,
  perDayUsd: row.per_day === null ? null : Number(row.per_day),
  perMonthUsd: row.per_month === null ? null : Number(row.per_month),
  updatedAt: row.updated_at,
});

export async function listBudgets(db: Executor): Promise<BudgetRow[]> {
  const rows = await db.selectFrom('budgets').selectAll().orderBy('scope').orderBy('subject').execute();
  return rows.map(toRow);
}

/** Sets one person's or profile's budgets (null keeps the default, 0 is off). */
export async function setBudget(db: Executor, scope: BudgetScope, subject: string, perDayUsd: number | null, perMonthUsd: number | null): Promise<BudgetRow> {
  const values = { scope, subject, per_day: perDayUsd === null ? null : String(perDayUsd), per_month: perMonthUsd === null ? null : String(perMonthUsd), updated_at: new Date() };
  const row = await db
    .insertInto('budgets')
    .values(values)
    .onConflict((oc) => oc.columns(['scope', 'subject']).doUpdateSet({ per_day: values.per_day, per_month: values.per_month, updated_at: values.updated_at }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRow(row);
}

/** Removes one budgets row (the defaults apply again); false when there was none. */
export async function removeBudget(db: Executor, scope: BudgetScope, subject: string): Promise<boolean> {
  const deleted = await db.deleteFrom('budgets').where('scope', '=', scope).where('subject', '=', subject).executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}
