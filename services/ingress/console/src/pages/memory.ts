import { api, segment } from '../api.ts';
import { confirmAction, go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace } from '../dom.ts';

interface Memory {
  entries: { id: string; content: string }[];
  usage: { chars: number; limit: number };
}

const FROZEN_NOTE = 'Running sessions keep the memory snapshot frozen in their system prompt: the change shows from the next session.';

function store(title: string, memory: Memory, remove: (id: string, content: string) => void): HTMLElement {
  return h(
    'section',
    { 'aria-label': title },
    h('h2', {}, title),
    h('p', { class: 'muted' }, `${memory.usage.chars} of ${memory.usage.limit} characters used`),
    memory.entries.length === 0
      ? h('p', { class: 'muted' }, 'No entries.')
      : h(
          'ul',
          { class: 'cards' },
          ...memory.entries.map((entry) =>
            h('li', { class: 'card entry', 'data-entry': entry.id }, h('div', { class: 'text' }, entry.content), h('div', { class: 'actions' }, h('button', { type: 'button', class: 'danger', 'aria-label': `Delete entry ${entry.id}`, on: { click: () => remove(entry.id, entry.content) } }, 'Delete'))),
          ),
        ),
  );
}

/** What the agent remembers, per profile and per person; delete an entry (from the next session on). */
export async function memoryPage(ctx: PageContext): Promise<void> {
  const profile = ctx.route.params.get('profile') || 'main';
  const userId = ctx.route.params.get('user_id') ?? '';
  const controls = { profile: input('profile', profile), user_id: input('user_id', userId, { placeholder: 'a person’s user id' }) };
  const submit = (event: Event) => {
    event.preventDefault();
    go(link('memory', [], { profile: controls.profile.value.trim(), user_id: controls.user_id.value.trim() }));
  };
  const status = h('div', { 'aria-live': 'polite' });
  const base = `/v1/profiles/${segment(profile)}`;
  const remove = async (id: string, content: string) => {
    if (!(await confirmAction(`Delete this memory entry? “${content.slice(0, 120)}”`, FROZEN_NOTE))) return;
    try {
      await api('DELETE', `${base}/memory/${segment(id)}`);
      go(location.hash);
    } catch (error) {
      replace(status, notice((error as Error).message, 'error'));
    }
  };
  const [shared, personal] = await Promise.all([api<Memory>('GET', `${base}/memory`), userId ? api<Memory>('GET', `${base}/users/${segment(userId)}/memory`) : Promise.resolve(null)]);
  if (!ctx.current()) return;
  replace(
    ctx.main,
    h('h1', {}, 'Memory'),
    h('form', { class: 'filters', on: { submit } }, field('Profile', controls.profile), field('Person', controls.user_id), h('button', { type: 'submit', class: 'primary' }, 'Show')),
    notice(FROZEN_NOTE),
    status,
    store(`Profile memory (${profile})`, shared, (id, content) => void remove(id, content)),
    personal ? store(`What the agent knows about ${userId}`, personal, (id, content) => void remove(id, content)) : h('p', { class: 'muted' }, 'Give a person’s user id to see their entries.'),
  );
}
