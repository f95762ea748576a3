import { z } from 'zod';
import { optionalText } from './fields.ts';

/**
 * Money budgets in US dollars, 0 off (each one's default). The defaults here apply to every person
 * and every profile; a row of the budgets table (PUT /v1/budgets/:scope/:subject, `herald budgets
 * set`) replaces them for one (docs/decisions/2026-12-06-usage-and-budgets.md).
 */
export interface BudgetDefaults {
  personDay: number;
  personMonth: number;
  profileDay: number;
  profileMonth: number;
}

/** Usage and cost: the price table's file and the budgets' defaults. */
export interface UsageConfig {
  /** HERALD_PRICES_FILE: read and checked at start by the roles that record model calls. */
  pricesFile: string | undefined;
  budgets: BudgetDefaults;
}

const dollars = z.coerce
  .number({ error: 'expected an amount in dollars, such as 25 or 2.50' })
  .finite({ error: 'expected an amount in dollars, such as 25 or 2.50' })
  .min(0, { error: 'expected 0 (off) or more' })
  .max(1_000_000_000, { error: 'expected at most 1000000000' })
  .default(0);

export const usageSection = z
  .object({
    HERALD_PRICES_FILE: optionalText,
    HERALD_BUDGET_PERSON_DAY: dollars,
    HERALD_BUDGET_PERSON_MONTH: dollars,
    HERALD_BUDGET_PROFILE_DAY: dollars,
    HERALD_BUDGET_PROFILE_MONTH: dollars,
  })
  .transform((e): UsageConfig => ({
    pricesFile: e.HERALD_PRICES_FILE,
    budgets: {
      personDay: e.HERALD_BUDGET_PERSON_DAY,
      personMonth: e.HERALD_BUDGET_PERSON_MONTH,
      profileDay: e.HERALD_BUDGET_PROFILE_DAY,
      profileMonth: e.HERALD_BUDGET_PROFILE_MONTH,
    },
  }));
