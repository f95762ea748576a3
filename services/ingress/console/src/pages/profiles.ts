import { api } from '../api.ts';
import { link } from '../app.ts';
import type { PageContext } from '../app.ts';
import { h, notice, replace } from '../dom.ts';

interface ModelSettings {
  primary: string;
  fallbacks?: string[];
  summary?: string;
  delegation?: string;
  context_tokens?: number;
}

/**
 * One row of GET /v1/profiles, written here once for the console: its schema lives beside the route
 * (profile-admin-routes.ts), built on @herald/profiles' model rules, which a browser bundle cannot import.
 */
export interface ProfileSummary {
  profile: string;
  display_name: string;
  model: ModelSettings | null;
  bindings: { index: number; match: Record<string, string> }[];
}

export interface ProfileList {
  profiles: ProfileSummary[];
}

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
  return profile.bindings.map((binding) => Object.entries(binding.match).map(([key, value]) => `${key}=${value}`).join(' ')).join('; ');
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
  replace(
    ctx.main,
    h('h1', {}, 'Profiles'),
    profiles.length === 0 ? notice('No profiles.') : h('ul', { class: 'rows', 'aria-label': 'Profiles' }, ...profiles.map(profileRow)),
  );
}
