// Profile lookups live in @herald/profiles (shared with the CLI); re-exported for the routes.
export { activeProfileIds as profileIds, profileExists, profileState } from '@herald/profiles';

/** The providers a model reference may name when the ingress is not told: the implicit two. */
export const DEFAULT_PROVIDERS: ReadonlySet<string> = new Set(['openai', 'anthropic']);
