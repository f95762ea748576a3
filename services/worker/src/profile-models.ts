import type { Provider } from '@herald/agent';

/** A profile's own models, built from its stored settings (PATCH /v1/profiles/:p `model`). */
export interface ProfileModelSet {
  /** `primary` as configured (`provider/model`): what the session's prompt names. */
  primaryRef: string;
  /** `primary` then `fallbacks`, behind failover. */
  provider: Provider;
  /** `summary`, else the profile's primary chain: writes its sessions' compression summaries. */
  summariser: Provider;
  /** `delegation`, else the profile's primary chain: runs its delegate_task children. */
  childProvider: Provider;
  /** `context_tokens`: the window its compression threshold is taken from. */
  contextTokens: number | undefined;
}

/** Answers a profile's own models, or null when it uses the deployment's (HERALD_MODEL and friends). */
export interface ProfileModels {
  forProfile(profileId: string): Promise<ProfileModelSet | null>;
}

export interface TurnModels {
  primaryRef: string | undefined;
  provider: Provider | null;
  summariser: Provider | null;
  childProvider: Provider | null;
  contextTokens: number | undefined;
}

/** The models a turn of `profileId`'s session calls: its own when it has them, else the deployment's. */
export async function turnModels(
  deps: { provider: Provider | null; summariser?: Provider | null | undefined; childProvider?: Provider | null | undefined; profileModels?: ProfileModels | undefined },
  profileId: string,
): Promise<TurnModels> {
  const own = (await deps.profileModels?.forProfile(profileId)) ?? null;
  if (own) return own;
  return { primaryRef: undefined, provider: deps.provider, summariser: deps.summariser ?? deps.provider, childProvider: deps.childProvider ?? null, contextTokens: undefined };
}
