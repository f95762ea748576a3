import { api, query } from '../api.ts';
import { go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace } from '../dom.ts';
import type { BudgetList as Budgets, UsageReportView, UsageRowView } from '../../../src/contracts/usage-views.ts';
import { costChart, dollars } from './usage-chart.ts';

const count = (value: number) => value.toLocaleString('en-US');

/** A table of one grouping: its key, calls, tokens and cost; models without a price are flagged. */
function usageTable(title: string, key: 'person' | 'model' | 'kind', report: UsageReportView): HTMLElement {
  const head = h('tr', {}, ...[key, 'calls', 'input', 'cached', 'output', 'cost (USD)'].map((name) => h('th', { scope: 'col' }, name)));
  const row = (item: UsageRowView) =>
    h(
      'tr',
      {},
      h(
        'th',
        { scope: 'row' },
        item[key] || '(before usage was recorded)',
        item.unknown_price_calls > 0 ? h('span', { class: 'badge warn', title: 'calls of a model without a price, counted at $0' }, ` ${item.unknown_price_calls} unpriced`) : null,
      ),
      h('td', {}, count(item.calls)),
      h('td', {}, count(item.input_tokens)),
      h('td', {}, count(item.cached_input_tokens)),
      h('td', {}, count(item.output_tokens)),
      h('td', {}, dollars(item.cost_usd)),
    );
  return h(
    'section',
    {},
    h('h2', {}, title),
    report.rows.length === 0
      ? h('p', { class: 'muted' }, 'No model calls in this range.')
      : h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), h('tbody', {}, ...report.rows.map(row)))),
  );
}

function budgetSection(budgets: Budgets): HTMLElement {
  const off = (value: number | null, fallback: number) => {
    const amount = value ?? fallback;
    return amount === 0 ? 'off' : `${dollars(amount)}${value === null ? ' (default)' : ''}`;
  };
  const d = budgets.defaults;
  const rows = budgets.budgets.map((budget) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, `${budget.scope} ${budget.subject}`),
      h('td', {}, off(budget.per_day, budget.scope === 'person' ? d.person_day : d.profile_day)),
      h('td', {}, off(budget.per_month, budget.scope === 'person' ? d.person_month : d.profile_month)),
    ),
  );
  return h(
    'section',
    {},
    h('h2', {}, 'Budgets'),
    h(
      'p',
      { class: 'muted' },
      Object.values(d).every((value) => value === 0)
        ? "No default budgets (HERALD_BUDGET_*). Set a person's or a profile's own with herald budgets set."
        : `Defaults: each person ${off(d.person_day, 0)} a day, ${off(d.person_month, 0)} a month; each profile ${off(d.profile_day, 0)} a day, ${off(d.profile_month, 0)} a month. Set a person's or a profile's own with herald budgets set.`,
    ),
    rows.length === 0
      ? null
      : h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ...['whose', 'per day', 'per month'].map((name) => h('th', { scope: 'col' }, name)))), h('tbody', {}, ...rows))),
  );
}

/** Cost per day stacked by profile, then by person, by model and by kind of call, and the budgets: GET /v1/usage and /v1/budgets. */
export async function usagePage(ctx: PageContext): Promise<void> {
  const from = ctx.route.params.get('from') ?? '';
  const to = ctx.route.params.get('to') ?? '';
  const range = { from, to };
  const [byDay, byPerson, byModel, byKind, budgets] = await Promise.all([
    api<UsageReportView>('GET', `/v1/usage${query({ group_by: 'day,profile', ...range })}`),
    api<UsageReportView>('GET', `/v1/usage${query({ group_by: 'person', ...range })}`),
    api<UsageReportView>('GET', `/v1/usage${query({ group_by: 'model', ...range })}`),
    // Turns' own calls, background reviews and compression summaries.
    api<UsageReportView>('GET', `/v1/usage${query({ group_by: 'kind', ...range })}`),
    api<Budgets>('GET', '/v1/budgets'),
  ]);
  if (!ctx.current()) return;
  const fromInput = input('from', from, { placeholder: byDay.from.slice(0, 10) });
  const toInput = input('to', to, { placeholder: new Date(Date.parse(byDay.to) - 86_400_000).toISOString().slice(0, 10) });
  const filters = h(
    'form',
    { class: 'filters', role: 'search', on: { submit: (event) => (event.preventDefault(), go(link('usage', [], { from: fromInput.value.trim(), to: toInput.value.trim() }))) } },
    field('From (YYYY-MM-DD)', fromInput),
    field('To (YYYY-MM-DD)', toInput),
    h('button', { type: 'submit' }, 'Show'),
  );
  const total = byDay.total;
  replace(
    ctx.main,
    h('h1', {}, 'Usage'),
    filters,
    h(
      'p',
      {},
      `${dollars(total.cost_usd)} in ${count(total.calls)} model calls, ${count(total.input_tokens)} input tokens (${count(total.cached_input_tokens)} cached), ${count(total.output_tokens)} output, ${byDay.from.slice(0, 10)} to ${toInput.placeholder}.`,
    ),
    total.unknown_price_calls > 0 ? notice(`${count(total.unknown_price_calls)} calls were of models without a price and count as $0: add them to HERALD_PRICES_FILE.`) : null,
    costChart(byDay.rows, byDay.from, byDay.to),
    usageTable('By person', 'person', byPerson),
    usageTable('By model', 'model', byModel),
    usageTable('By kind of call', 'kind', byKind),
    budgetSection(budgets),
  );
}
