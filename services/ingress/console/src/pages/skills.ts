import { api, segment } from '../api.ts';
import { go, link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { field, h, input, notice, replace } from '../dom.ts';
import { timeElement } from '../time.ts';
import type { SkillDetail, SkillList, SkillSummary } from '../../../src/contracts/knowledge-views.ts';

/** Herald's own skill and its state, or who in the profile made it. */
function originText(skill: SkillSummary): string {
  if (skill.builtin === null) return `by ${skill.created_by}`;
  const offer = skill.builtin.offered_version === null ? '' : `, v${skill.builtin.offered_version} offered`;
  return `built-in v${skill.builtin.version}${skill.builtin.edited ? ', edited' : ''}${offer}`;
}

export function profileForm(profile: string, page: string): HTMLFormElement {
  const control = input('profile', profile);
  const submit = (event: Event) => {
    event.preventDefault();
    go(link(page, [], { profile: control.value.trim() }));
  };
  return h('form', { class: 'filters', on: { submit } }, field('Profile', control), h('button', { type: 'submit' }, 'Show'));
}

function skillRow(skill: SkillSummary, profile: string): HTMLElement {
  return h(
    'li',
    { class: 'row' },
    h('a', { href: link('skills', [skill.name], { profile }), class: 'row-main' }, h('span', { class: 'chat' }, skill.name), h('span', {}, skill.description)),
    h(
      'span',
      { class: 'meta' },
      h('span', {}, `v${skill.version}`),
      skill.pinned ? h('span', { class: 'badge ok' }, 'pinned') : null,
      skill.shared ? null : h('span', { class: 'badge muted' }, `only ${skill.owner_id ?? 'its owner'}`),
      skill.category ? h('span', {}, skill.category) : null,
      h('span', { class: skill.builtin ? 'badge muted' : '' }, originText(skill)),
      h('span', {}, 'updated ', timeElement(skill.updated_at)),
    ),
  );
}

async function skillDetail(ctx: PageContext, profile: string, name: string): Promise<void> {
  const path = `/v1/profiles/${segment(profile)}/skills/${segment(name)}`;
  const skill = await api<SkillDetail>('GET', path);
  const status = h('div', { 'aria-live': 'polite' });
  const togglePin = async () => {
    await api('PUT', `${path}/pin`, { pinned: !skill.pinned });
    go(location.hash);
  };
  const toggleShare = async () => {
    await api('PUT', `${path}/share`, { shared: !skill.shared });
    go(location.hash);
  };
  const content = typeof skill.content === 'string' ? skill.content : `(binary, ${skill.content.content.length} base64 characters)`;
  replace(
    ctx.main,
    h('p', {}, h('a', { href: link('skills', [], { profile }) }, '← Skills')),
    h('h1', {}, skill.name),
    h('p', {}, skill.description),
    h(
      'p',
      { class: 'meta' },
      h('span', {}, `version ${skill.version}`),
      h('span', { class: `badge ${skill.pinned ? 'ok' : 'muted'}` }, skill.pinned ? 'pinned: the reviewer leaves it alone' : 'not pinned'),
      h('span', { class: `badge ${skill.shared ? 'ok' : 'muted'}` }, skill.shared ? 'shared with everyone in the profile' : `seen only by ${skill.owner_id ?? 'its owner'} until shared`),
    ),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', on: { click: () => void togglePin() } }, skill.pinned ? 'Unpin' : 'Pin'),
      h('button', { type: 'button', on: { click: () => void toggleShare() } }, skill.shared ? 'Unshare' : 'Share'),
    ),
    status,
    h('h2', {}, 'SKILL.md'),
    h('pre', { class: 'text doc' }, content),
    h('h2', {}, 'Files'),
    h('ul', { class: 'plain' }, ...skill.files.map((file) => h('li', { class: 'mono' }, `${file.path} · ${file.bytes} bytes`))),
    h('h2', {}, 'Versions'),
    h(
      'ul',
      { class: 'plain' },
      ...skill.versions.map((version) => h('li', {}, `v${version.version} ${version.action} by ${version.author} · `, timeElement(version.created_at), version.note ? ` · ${version.note}` : '')),
    ),
  );
}

/** Skills of a profile: the list, and one skill's SKILL.md, files and versions, with pin, unpin, share and unshare. */
export async function skillsPage(ctx: PageContext): Promise<void> {
  const profile = ctx.route.params.get('profile') || 'main';
  const name = ctx.route.parts[0];
  if (name !== undefined) return skillDetail(ctx, profile, name);
  const { skills } = await api<SkillList>('GET', `/v1/profiles/${segment(profile)}/skills`);
  replace(
    ctx.main,
    h('h1', {}, 'Skills'),
    profileForm(profile, 'skills'),
    skills.length === 0 ? notice('No skills in this profile yet.') : h('ul', { class: 'rows', 'aria-label': 'Skills' }, ...skills.map((skill) => skillRow(skill, profile))),
  );
}
