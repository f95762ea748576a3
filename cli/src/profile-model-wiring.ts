import type { ProfileCache } from '@herald/db';
import { storedModelSettings } from '@herald/profiles';
import type { ModelSettings } from '@herald/profiles';
import type { Provider } from '@herald/agent';
import type { ProfileModels, ProfileModelSet } from '@herald/worker';
import { chainProvider } from './provider-wiring.ts';
import type { ModelWiring } from './provider-wiring.ts';

/** A profile's settings turned into failover chains, each field named as the API names it. */
function modelSetOf(wiring: ModelWiring, settings: ModelSettings): ProfileModelSet {
  const provider = chainProvider(wiring, [settings.primary, ...(settings.fallbacks ?? [])], 'model.primary', 'model.fallbacks');
  const single = (ref: string | undefined, field: string): Provider => (ref === undefined ? provider : chainProvider(wiring, [ref], field));
  return {
    primaryRef: settings.primary,
    provider,
    summariser: single(settings.summary, 'model.summary'),
    childProvider: single(settings.delegation, 'model.delegation'),
    contextTokens: settings.context_tokens,
  };
}

/**
 * Each profile's own models, built once and kept while its stored settings stay the same. The
 * settings come through the profile cache, which drops a profile's copy when Postgres notifies a
 * change (migrations/0061_profiles_managed.sql), so a PATCH reaches every worker's next turn; the
 * chains (and their providers' clients) are rebuilt only when the stored value differs.
 */
export class ProfileModelCache implements ProfileModels {
  readonly #wiring: ModelWiring;
  readonly #profiles: ProfileCache;
  readonly #built = new Map<string, { stored: string; set: ProfileModelSet | null }>();

  constructor(wiring: ModelWiring, profiles: ProfileCache) {
    this.#wiring = wiring;
    this.#profiles = profiles;
  }

  async forProfile(profileId: string): Promise<ProfileModelSet | null> {
    const settings = await this.#profiles.get(profileId);
    const stored = JSON.stringify(settings.model ?? null);
    const built = this.#built.get(profileId);
    if (built?.stored === stored) return built.set;
    const set = this.#build(profileId, settings.model);
    this.#built.set(profileId, { stored, set });
    return set;
  }

  #build(profileId: string, raw: unknown): ProfileModelSet | null {
    const settings = storedModelSettings(raw);
    if (settings === null) return null;
    try {
      return modelSetOf(this.#wiring, settings);
    } catch (error) {
      // Checked when written; a provider since removed from HERALD_PROVIDERS_FILE lands here.
      this.#wiring.logger.error({ profileId, err: error }, "the profile's models cannot be used; it runs on the deployment's models");
      return null;
    }
  }
}
