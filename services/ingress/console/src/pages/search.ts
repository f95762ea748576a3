import { api, query } from '../api.ts';
import { go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace, select } from '../dom.ts';
import { timeElement } from '../time.ts';
import { personInput, resolvePerson } from '../people.ts';
import type { SearchAnswer } from '../../../src/contracts/knowledge-views.ts';

const SORTS = [
  ['relevance', 'relevance'],
  ['newest', 'newest first'],
  ['oldest', 'oldest first'],
] as const;

/** The server marks matches as >>>word<<<; each becomes a <mark> around a text node, the rest plain text. */
export function highlighted(snippet: string): HTMLElement {
  const element = h('span', { class: 'snippet' });
  let rest = snippet;
  while (rest.length > 0) {
    const open = rest.indexOf('>>>');
    const close = open === -1 ? -1 : rest.indexOf('<<<', open + 3);
    if (open === -1 || close === -1) {
      element.append(rest);
      break;
    }
    element.append(rest.slice(0, open), h('mark', {}, rest.slice(open + 3, close)));
    rest = rest.slice(close + 3);
  }
  return element;
}

function syntaxHelp(): HTMLElement {
  const rows: [string, string][] = [
    ['deploy failed', 'both words (stems and prefixes: deploying finds deployment)'],
    ['"exact phrase"', 'the words in this order'],
    ['postgres OR redis', 'either word'],
    ['-staging  or  NOT staging', 'leave out messages with the word'],
    ['数据库', 'Chinese, Japanese and Korean text: substrings of 3+ characters'],
  ];
  return h(
    'details',
    { class: 'fold help' },
    h('summary', {}, 'Search syntax'),
    h('dl', {}, ...rows.flatMap(([example, meaning]) => [h('dt', { class: 'mono' }, example), h('dd', {}, meaning)])),
    h('p', { class: 'muted' }, 'A person sees the sessions they started or wrote in, plus the shared chat types of the profile.'),
  );
}

function results(answer: SearchAnswer): HTMLElement {
  if (answer.sessions.length === 0) return notice('Nothing found.');
  return h(
    'ol',
    { class: 'cards', 'aria-label': 'Results' },
    ...answer.sessions.map((session) =>
      h(
        'li',
        { class: 'card' },
        h('div', { class: 'meta' }, h('a', { href: link('session', [session.session_id]) }, `${session.platform} ${session.chat_type} session`), ' started ', timeElement(session.started_at)),
        h(
          'ul',
          { class: 'hits' },
          ...session.hits.map((hit) =>
            h(
              'li',
              {},
              h(
                'a',
                { href: link('session', [session.session_id], { at: hit.message_id }), class: 'hit-link', 'data-hit': hit.message_id },
                h('span', { class: `role ${hit.role}` }, hit.tool_name ?? hit.role),
                ' ',
                highlighted(hit.snippet),
              ),
              ' ',
              timeElement(hit.created_at),
            ),
          ),
        ),
      ),
    ),
  );
}

/** History search as one person sees it; each hit opens its session at that message. */
export async function searchPage(ctx: PageContext): Promise<void> {
  const params = ctx.route.params;
  const controls = {
    q: input('q', params.get('q') ?? '', { type: 'search', placeholder: 'words, "phrases", a OR b, -word', required: true }),
    user_id: personInput('user_id', params.get('user_id') ?? '', { placeholder: 'a name or an id: alice, api:alice, <platform>:<id>', required: true }),
    profile: input('profile', params.get('profile') ?? 'main'),
    sort: select('sort', SORTS, params.get('sort') ?? 'relevance'),
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const userId = await resolvePerson(controls.user_id.value);
    go(link('search', [], { q: controls.q.value, user_id: userId, profile: controls.profile.value.trim(), sort: controls.sort.value }));
  };
  const output = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'filters', role: 'search', on: { submit: (event) => void submit(event) } },
    field('Search', controls.q),
    field('Person', controls.user_id),
    field('Profile', controls.profile),
    field('Sort', controls.sort),
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  );
  replace(ctx.main, h('h1', {}, 'Search'), form, syntaxHelp(), output);
  const q = params.get('q');
  const userId = params.get('user_id');
  if (!q || !userId) {
    replace(output, notice('History search reads as a person: give the words and whose history to search.'));
    (q ? controls.user_id : controls.q).focus();
    return;
  }
  try {
    const answer = await api<SearchAnswer>('GET', `/v1/search${query({ q, user_id: userId, profile: params.get('profile') ?? 'main', sort: params.get('sort') ?? undefined, hits: 5 })}`);
    if (ctx.current()) replace(output, results(answer));
  } catch (error) {
    replace(output, notice((error as Error).message, 'error'));
  }
}
