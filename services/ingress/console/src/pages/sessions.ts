import { api, query } from '../api.ts';
import { go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace, select } from '../dom.ts';
import { timeElement } from '../time.ts';
import type { SessionList, SessionPlatform, SessionSummary } from '../../../src/contracts/session-views.ts';

export type { SessionSummary };

const STATES = [
  ['', 'live and ended'],
  ['live', 'live'],
  ['ended', 'ended'],
] as const;
const FILTERS = ['platform', 'user_id', 'chat_id', 'state'] as const;

/** One session as a row: where it lives, whose it is, how long, and whether it is still the chat's current one. */
export function sessionRow(session: SessionSummary): HTMLElement {
  const chat = `${session.platform} ${session.chat_type} ${session.chat_id}${session.thread_id ? ` · thread ${session.thread_id}` : ''}`;
  return h(
    'li',
    { class: 'row', 'data-session': session.session_id },
    h('a', { href: link('session', [session.session_id]), class: 'row-main' }, h('span', { class: 'chat' }, chat), h('span', { class: 'key mono' }, session.session_key)),
    h(
      'span',
      { class: 'meta' },
      h('span', { class: `badge ${session.live ? 'ok' : 'muted'}` }, session.live ? 'live' : 'ended'),
      session.pending_waits > 0 ? h('span', { class: 'badge warn' }, `${session.pending_waits} waiting`) : null,
      h('span', {}, `${session.messages} messages`),
      session.origin_user_id ? h('span', {}, `person ${session.origin_user_id}`) : null,
      session.parent_session_id ? h('span', {}, 'child session') : null,
      session.children > 0 ? h('span', {}, `${session.children} children`) : null,
      h('span', {}, 'started ', timeElement(session.created_at)),
    ),
  );
}

/**
 * The platform filter's choices come with the first page (the server's registry); until then it
 * offers "any" and the platform already chosen, so a filtered page shows its filter at once.
 */
function platformChoices(platforms: readonly SessionPlatform[], chosen: string): [string, string][] {
  const choices: [string, string][] = [['', 'any'], ...platforms.map((platform): [string, string] => [platform.name, platform.label])];
  return chosen === '' || choices.some(([name]) => name === chosen) ? choices : [...choices, [chosen, chosen]];
}

function offerPlatforms(control: HTMLSelectElement, platforms: readonly SessionPlatform[]): void {
  const chosen = control.value;
  control.replaceChildren(...platformChoices(platforms, chosen).map(([name, label]) => h('option', { value: name }, label)));
  control.value = chosen;
}

function filterForm(params: URLSearchParams, platform: HTMLSelectElement): HTMLFormElement {
  const controls = {
    platform,
    user_id: input('user_id', params.get('user_id') ?? '', { placeholder: 'user id' }),
    chat_id: input('chat_id', params.get('chat_id') ?? '', { placeholder: 'chat id' }),
    state: select('state', STATES, params.get('state') ?? ''),
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const values: Record<string, string> = {};
    for (const name of FILTERS) values[name] = controls[name].value.trim();
    go(link('sessions', [], values));
  };
  return h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter sessions', on: { submit } },
    field('Platform', controls.platform),
    field('Person', controls.user_id),
    field('Chat', controls.chat_id),
    field('State', controls.state),
    h('button', { type: 'submit', class: 'primary' }, 'Filter'),
  );
}

/** Sessions, newest first, filtered; the first page refreshes itself, "More" follows the keyset cursor. */
export async function sessionsPage(ctx: PageContext): Promise<void> {
  const filters: Record<string, string> = {};
  for (const name of FILTERS) filters[name] = ctx.route.params.get(name) ?? '';
  const list = h('ul', { class: 'rows', 'aria-label': 'Sessions' });
  const more = h('div', { class: 'more' });
  const status = h('div', { 'aria-live': 'polite' });
  let pages = 1;
  const platform = select('platform', platformChoices([], filters.platform ?? ''), filters.platform ?? '');
  let offered = false;
  const load = async (before: string | null): Promise<void> => {
    const page = await api<SessionList>('GET', `/v1/sessions${query({ ...filters, before, limit: 50 })}`);
    if (!ctx.current()) return;
    if (!offered) offerPlatforms(platform, page.platforms);
    offered = true;
    if (before === null) replace(list);
    for (const session of page.sessions) list.append(sessionRow(session));
    if (list.childElementCount === 0) replace(status, notice('No session matches these filters.'));
    else replace(status);
    const next = page.next_before;
    replace(more, next ? h('button', { type: 'button', on: { click: () => void load(next).then(() => pages++) } }, 'More') : null);
  };
  replace(ctx.main, h('h1', {}, 'Sessions'), filterForm(ctx.route.params, platform), status, list, more);
  await load(null);
  // Live: new sessions show up on the first page without a reload (later pages stay as read).
  ctx.every(5000, async () => {
    if (pages === 1) await load(null);
  });
}
