import { api, segment } from '../api.ts';
import { confirmAction, go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace } from '../dom.ts';
import type { MemoryView as Memory } from '../../../src/contracts/knowledge-views.ts';
import type { ProfileView } from '../../../src/contracts/profile-views.ts';

type Remove = (id: string, content: string) => void;

const FROZEN_NOTE = 'Running sessions keep the memory snapshot frozen in their system prompt: the change shows from the next session.';

function store(title: string, memory: Memory, remove: Remove, explain = ''): HTMLElement {
  return h(
    'section',
    { 'aria-label': title },
    h('h2', {}, title),
    explain ? h('p', { class: 'muted' }, explain) : '',
    h('p', { class: 'muted' }, `${memory.usage.chars} of ${memory.usage.limit} characters used`),
    memory.entries.length === 0
      ? h('p', { class: 'muted' }, 'No entries.')
      : h(
          'ul',
          { class: 'cards' },
          ...memory.entries.map((entry) =>
            h(
              'li',
              { class: 'card entry', 'data-entry': entry.id },
              h('div', { class: 'text' }, entry.content),
              h(
                'div',
                { class: 'actions' },
                h('button', { type: 'button', class: 'danger', 'aria-label': `Delete entry ${entry.id}`, on: { click: () => remove(entry.id, entry.content) } }, 'Delete'),
              ),
            ),
          ),
        ),
  );
}

/** Where the agent's notes go, as the profile's `memory_shared` setting says. */
function scopeNote(shared: boolean): string {
  return shared
    ? 'This profile shares the agent’s notes (memory_shared on): every session reads and writes the profile-wide notes; a person’s own notes, kept from before, reach no prompt.'
    : 'Each person’s agent notes are their own (memory_shared off): a session reads and writes the notes of the person it talks to; the profile-wide notes reach no prompt until sharing is on.';
}

/** A person's two stores: the agent's notes written in their sessions, and its profile of them. */
async function personSections(base: string, userId: string, remove: Remove): Promise<HTMLElement[]> {
  if (!userId) return [h('p', { class: 'muted' }, 'Give a person’s user id to see their own agent notes and what the agent knows about them.')];
  const [notes, about] = await Promise.all([
    api<Memory>('GET', `${base}/memory?${new URLSearchParams({ user_id: userId }).toString()}`),
    api<Memory>('GET', `${base}/users/${segment(userId)}/memory`),
  ]);
  return [
    store(`Agent notes from ${userId}’s sessions`, notes, remove, 'The notes the agent wrote in this person’s sessions while they were their own.'),
    store(`What the agent knows about ${userId}`, about, remove),
  ];
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
  const onRemove: Remove = (id, content) => void remove(id, content);
  const [settings, shared, person] = await Promise.all([api<ProfileView>('GET', base), api<Memory>('GET', `${base}/memory`), personSections(base, userId, onRemove)]);
  if (!ctx.current()) return;
  replace(
    ctx.main,
    h('h1', {}, 'Memory'),
    h('form', { class: 'filters', on: { submit } }, field('Profile', controls.profile), field('Person', controls.user_id), h('button', { type: 'submit', class: 'primary' }, 'Show')),
    notice(FROZEN_NOTE),
    h('p', { class: 'muted', 'data-memory-scope': settings.memory_shared ? 'shared' : 'personal' }, scopeNote(settings.memory_shared)),
    status,
    store(`Profile-wide agent notes (${profile})`, shared, onRemove),
    ...person,
  );
}
