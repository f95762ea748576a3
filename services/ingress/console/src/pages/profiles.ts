import { api } from '../api.ts';
import { link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { h, notice, replace } from '../dom.ts';
import type { ModelSettingsView as ModelSettings, ProfileList, ProfileSummary } from '../../../src/contracts/profile-views.ts';

function models(model: ModelSettings | null): string {
  if (model === null) return "the deployment's models (HERALD_MODEL)";
  const parts = [[model.primary, ...(model.fallbacks ?? [])].join(' → ')];
  if (model.summary) parts.push(`summary ${model.summary}`);
  if (model.delegation) parts.push(`children ${model.delegation}`);
  if (model.context_tokens) parts.push(`context ${model.context_tokens} tokens`);
  return parts.join(' · ');
}

function bindings(profile: ProfileSummary): string {
  if (profile.bindings.length === 0) return 'no bindings';
  return profile.bindings
    .map((binding) =>
      Object.entries(binding.match)
        .map(([key, value]) => `${key}=${value}`)
        .join(' '),
    )
    .join('; ');
}

function profileRow(profile: ProfileSummary): HTMLElement {
  return h(
    'li',
    { class: 'row' },
    h('a', { href: link('skills', [], { profile: profile.profile }), class: 'row-main' }, h('span', { class: 'chat' }, profile.profile), h('span', {}, profile.display_name)),
    h('span', { class: 'meta' }, h('span', { class: 'mono' }, models(profile.model)), h('span', {}, bindings(profile))),
  );
}

/** The profiles (agents) of the deployment, each with its models and the bindings that reach it. */
export async function profilesPage(ctx: PageContext): Promise<void> {
  const { profiles } = await api<ProfileList>('GET', '/v1/profiles');
  replace(ctx.main, h('h1', {}, 'Profiles'), profiles.length === 0 ? notice('No profiles.') : h('ul', { class: 'rows', 'aria-label': 'Profiles' }, ...profiles.map(profileRow)));
}
