// The per-day cost chart, stacked by profile: plain SVG built node by node (no chart library, and
// nothing parsed as markup: every label is a text node).
import type { UsageRowView } from '../../../src/contracts/usage-views.ts';
import { h } from '../dom.ts';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 720;
const HEIGHT = 240;
const PAD = { left: 56, right: 8, top: 8, bottom: 28 };
/** Colours a profile keeps across days, readable in light and dark; past these they repeat. */
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) element.setAttribute(key, String(value));
  for (const child of children) element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return element;
}

/** Cents from ten cents on, a hundredth of a cent below (a chat's calls cost fractions of a cent). */
export const dollars = (value: number): string => `$${value.toFixed(value >= 0.1 || value === 0 ? 2 : 4)}`;

/** Every day from `from` up to (not including) `to`, as YYYY-MM-DD: days without calls show as gaps. */
function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(from.slice(0, 10)); time < Date.parse(to) && days.length < 400; time += 86_400_000) days.push(new Date(time).toISOString().slice(0, 10));
  return days;
}

/** A round top for the axis: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

/** The stacked bars with their axis and a legend; each segment's title says its day, profile and cost. */
export function costChart(rows: readonly UsageRowView[], from: string, to: string): HTMLElement {
  const days = daysBetween(from, to);
  const profiles = [...new Set(rows.map((row) => row.profile ?? ''))].sort();
  const colour = (profile: string) => PALETTE[profiles.indexOf(profile) % PALETTE.length] ?? PALETTE[0]!;
  const byDay = new Map<string, UsageRowView[]>();
  for (const row of rows) byDay.set(row.day ?? '', [...(byDay.get(row.day ?? '') ?? []), row]);
  const top = niceMax(Math.max(0, ...days.map((day) => (byDay.get(day) ?? []).reduce((sum, row) => sum + row.cost_usd, 0))));
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = (WIDTH - PAD.left - PAD.right) / Math.max(1, days.length);
  const y = (value: number) => PAD.top + plotHeight - (value / top) * plotHeight;
  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart', role: 'img', 'aria-label': `Cost per day from ${days[0] ?? from} to ${days.at(-1) ?? to}, stacked by profile` });
  for (const tick of [0, top / 2, top]) {
    chart.append(
      svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(tick), y2: y(tick), class: 'grid' }),
      svg('text', { x: PAD.left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'axis' }, dollars(tick)),
    );
  }
  days.forEach((day, index) => {
    let base = 0;
    for (const row of (byDay.get(day) ?? []).sort((a, b) => profiles.indexOf(a.profile ?? '') - profiles.indexOf(b.profile ?? ''))) {
      const height = y(base) - y(base + row.cost_usd);
      const rect = svg('rect', {
        x: PAD.left + index * slot + slot * 0.15,
        width: Math.max(1, slot * 0.7),
        y: y(base + row.cost_usd),
        height: Math.max(0, height),
        fill: colour(row.profile ?? ''),
        'data-day': day,
        'data-profile': row.profile ?? '',
      });
      rect.append(svg('title', {}, `${day} · ${row.profile ?? ''}: ${dollars(row.cost_usd)}, ${row.calls} calls`));
      chart.append(rect);
      base += row.cost_usd;
    }
    if (days.length <= 14 || index % Math.ceil(days.length / 10) === 0) {
      chart.append(svg('text', { x: PAD.left + index * slot + slot / 2, y: HEIGHT - 8, 'text-anchor': 'middle', class: 'axis' }, day.slice(5)));
    }
  });
  const legend = h('ul', { class: 'legend', 'aria-label': 'Profiles' }, ...profiles.map((profile) => h('li', {}, h('span', { class: 'swatch', 'data-colour': colour(profile) }), profile)));
  for (const swatch of legend.querySelectorAll<HTMLElement>('.swatch')) swatch.style.background = swatch.dataset['colour'] ?? '';
  return h('figure', { class: 'card chart-card' }, chart, legend);
}
