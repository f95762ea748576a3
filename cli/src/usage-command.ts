import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { getFromApi, sendToApi } from './admin-api.ts';
import { table } from './status-command.ts';

export const USAGE_USAGE = `herald usage [options]     model tokens and cost through the API (GET /v1/usage)
  --group-by G     person, profile, model, day or kind (turn, review, compression), or several separated by commas (default day)
  --from DATE      from this day (YYYY-MM-DD, UTC) or time (ISO 8601), inclusive (default: 30 days ago)
  --to DATE        through this day, or until this time (default: today)
  --json           print the API's JSON answer

herald budgets [list]                                     the money budgets: the defaults and each one's own
herald budgets set person|profile NAME [--day USD] [--month USD]   a person's or profile's own budgets (0: off)
herald budgets remove person|profile NAME                 back to the defaults (HERALD_BUDGET_*)`;

interface UsageRow {
  person?: string;
  profile?: string;
  model?: string;
  day?: string;
  kind?: string;
  calls: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  unknown_price_calls: number;
}

interface UsageAnswer {
  group_by: string[];
  from: string;
  to: string;
  rows: UsageRow[];
  total: UsageRow;
}

const number = (value: number) => value.toLocaleString('en-US');
const dollars = (value: number) => `$${value.toFixed(value >= 1 || value === 0 ? 2 : 4)}`;

/** One line per group, then the total; a model without a price is flagged with its calls. */
export function formatUsage(answer: UsageAnswer): string {
  const head = [...answer.group_by, 'calls', 'input', 'cached', 'output', 'cost (USD)', 'unpriced'];
  const line = (keys: string[], row: UsageRow) => [
    ...keys,
    number(row.calls),
    number(row.input_tokens),
    number(row.cached_input_tokens),
    number(row.output_tokens),
    dollars(row.cost_usd),
    row.unknown_price_calls > 0 ? String(row.unknown_price_calls) : '',
  ];
  const rows = answer.rows.map((row) =>
    line(
      answer.group_by.map((group) => row[group as 'day'] ?? ''),
      row,
    ),
  );
  const total = line(
    answer.group_by.map((_, index) => (index === 0 ? 'total' : '')),
    answer.total,
  );
  return `${answer.from.slice(0, 10)} to ${answer.to.slice(0, 10)} (exclusive)\n${table([head, ...rows, total])}\n`;
}

/** `herald usage`: GET /v1/usage with the same grouping. */
export async function runUsage(argv: string[], config: Config): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { 'group-by': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE_USAGE}\n`);
    return 0;
  }
  const params = new URLSearchParams();
  for (const [key, value] of [
    ['group_by', values['group-by']],
    ['from', values.from],
    ['to', values.to],
  ] as const)
    if (value !== undefined) params.set(key, value);
  const body = await getFromApi<UsageAnswer>(config, `/v1/usage?${params.toString()}`, 'usage');
  if (typeof body === 'number') return body;
  process.stdout.write(values.json ? `${JSON.stringify(body, null, 2)}\n` : formatUsage(body));
  return 0;
}

interface BudgetAnswer {
  defaults: Record<string, number>;
  budgets: { scope: string; subject: string; per_day: number | null; per_month: number | null }[];
}

const amount = (value: number | null, fallback: string) => (value === null ? `default (${fallback})` : value === 0 ? 'off' : dollars(value));

function formatBudgets(answer: BudgetAnswer): string {
  const d = answer.defaults;
  const off = (value: number | undefined) => (value ? dollars(value) : 'off');
  const lines = [`defaults: person ${off(d['person_day'])} a day, ${off(d['person_month'])} a month; profile ${off(d['profile_day'])} a day, ${off(d['profile_month'])} a month`];
  const rows = answer.budgets.map((budget) => [budget.scope, budget.subject, amount(budget.per_day, off(d[`${budget.scope}_day`])), amount(budget.per_month, off(d[`${budget.scope}_month`]))]);
  lines.push(rows.length === 0 ? 'no person or profile has budgets of its own' : table([['scope', 'name', 'per day', 'per month'], ...rows]));
  return `${lines.join('\n')}\n`;
}

function dollarsArg(value: string | undefined): number | undefined | 'bad' {
  if (value === undefined) return undefined;
  return /^\d+(\.\d+)?$/.test(value) ? Number(value) : 'bad';
}

/** `herald budgets`: list, set or remove budgets through the API (/v1/budgets). */
export async function runBudgets(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { day: { type: 'string' }, month: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  });
  const [action = 'list', scope, name] = positionals;
  if (values.help) {
    process.stdout.write(`${USAGE_USAGE}\n`);
    return 0;
  }
  if (action === 'list') {
    const body = await getFromApi<BudgetAnswer>(config, '/v1/budgets', 'budgets');
    if (typeof body === 'number') return body;
    process.stdout.write(formatBudgets(body));
    return 0;
  }
  const day = dollarsArg(values.day);
  const month = dollarsArg(values.month);
  if ((action !== 'set' && action !== 'remove') || (scope !== 'person' && scope !== 'profile') || !name || day === 'bad' || month === 'bad') {
    process.stderr.write(`herald budgets: expected list, set or remove, person or profile, a name, and amounts in US dollars\n${USAGE_USAGE}\n`);
    return 2;
  }
  const path = `/v1/budgets/${scope}/${encodeURIComponent(name)}`;
  const answer =
    action === 'set'
      ? await sendToApi(config, 'PUT', path, 'budgets', { ...(day === undefined ? {} : { per_day: day }), ...(month === undefined ? {} : { per_month: month }) })
      : await sendToApi(config, 'DELETE', path, 'budgets');
  if (typeof answer === 'number') return answer;
  process.stdout.write(action === 'set' ? `set the budgets of ${scope} ${name}\n` : `removed the budgets of ${scope} ${name}; the defaults apply\n`);
  return 0;
}
