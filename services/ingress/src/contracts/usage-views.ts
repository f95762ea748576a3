import { z } from 'zod';
import { isoTime } from './common.ts';

// GET /v1/usage and the budgets (usage-routes.ts); the console's usage page reads these types.

const totals = {
  calls: z.number().int(),
  input_tokens: z.number().int().meta({ description: 'every input token the provider reported, cached ones included' }),
  cached_input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost_usd: z.number().meta({ description: 'from the price table (HERALD_PRICES_FILE, then the built-in prices)' }),
  unknown_price_calls: z.number().int().meta({ description: 'calls of models without a price, counted at 0' }),
};

export const usageTotals = z.object(totals);

/**
 * One group: the keys it was grouped by (person, profile, model as provider/model, day as
 * YYYY-MM-DD, kind as what the calls were for), then its totals.
 */
export const usageRow = z.object({
  person: z.string().optional(),
  profile: z.string().optional(),
  model: z.string().optional(),
  day: z.string().optional(),
  kind: z.string().optional().meta({ description: "turn (a turn's own calls), review (background reviews of turns) or compression (summaries)" }),
  ...totals,
});

export const usageReportView = z.object({
  group_by: z.array(z.enum(['person', 'profile', 'model', 'day', 'kind'])),
  from: isoTime,
  to: isoTime.meta({ description: 'exclusive' }),
  currency: z.literal('USD'),
  rows: z.array(usageRow),
  total: usageTotals,
});

export const budgetView = z.object({
  scope: z.enum(['person', 'profile']),
  subject: z.string(),
  per_day: z.number().nullable().meta({ description: 'US dollars; null: the HERALD_BUDGET_* default; 0: off' }),
  per_month: z.number().nullable(),
  updated_at: isoTime,
});

export const budgetList = z.object({
  defaults: z.object({ person_day: z.number(), person_month: z.number(), profile_day: z.number(), profile_month: z.number() }),
  budgets: z.array(budgetView),
});

export type UsageReportView = z.infer<typeof usageReportView>;
export type UsageRowView = z.infer<typeof usageRow>;
export type BudgetView = z.infer<typeof budgetView>;
export type BudgetList = z.infer<typeof budgetList>;
