import { z } from 'zod';
import { anyJson, isoTime } from './common.ts';

/**
 * A profile's own models as the API shows them (names only, never a key). The rules a change must
 * meet (`provider/model` references, the limits) are @herald/profiles' modelSettingsSchema, which
 * the console's bundle cannot import; test/api-contracts.test.ts holds the two to the same fields.
 */
export const modelSettingsView = z.object({
  primary: z.string().meta({ description: 'provider/model' }),
  fallbacks: z.array(z.string()).optional(),
  summary: z.string().optional(),
  delegation: z.string().optional(),
  context_tokens: z.number().int().optional(),
});

export const profileView = z.object({
  profile: z.string(),
  display_name: z.string(),
  identity: z.string(),
  memory_char_limit: z.number().int(),
  user_char_limit: z.number().int(),
  tool_policy: anyJson,
  memory_review_interval: z.number().int(),
  skill_review_interval: z.number().int(),
  search_shared_chat_types: z.array(z.string()),
  memory_shared: z.boolean(),
  session_reset: anyJson,
  documents: z.array(z.object({ name: z.string(), content: z.string(), updated_at: isoTime })),
  /** The profile's own models (names only, never a key); null: the deployment's HERALD_MODEL and friends. */
  model: modelSettingsView.nullable(),
  /** Set once the profile is deleted: its records stay, read-only. */
  deleted_at: isoTime.nullable(),
});

export const documentView = z.object({ profile: z.string(), name: z.string(), content: z.string() });

/** A profile's own hooks, as stored (the request's rules: @herald/hooks profileHooksSchema). */
export const hooksView = z.object({ hooks: z.array(z.record(z.string(), anyJson)) });

export type ProfileView = z.infer<typeof profileView>;

/** One row of GET /v1/profiles (and POST's 201): the profile, its models and the bindings that route to it. */
export const profileSummary = z.object({
  name: z.string(),
  profile: z.string(),
  display_name: z.string(),
  created_at: z.string(),
  model: modelSettingsView.nullable(),
  bindings: z.array(z.object({ index: z.number().int(), match: z.record(z.string(), z.string()) })),
});

export const profileList = z.object({ profiles: z.array(profileSummary) });

export type ProfileSummary = z.infer<typeof profileSummary>;
export type ProfileList = z.infer<typeof profileList>;
export type ModelSettingsView = z.infer<typeof modelSettingsView>;

/** One binding as GET and PUT /v1/bindings show it: the fields it matches and the profile it names. */
export const bindingView = z.object({
  platform: z.string().optional(),
  account: z.string().optional(),
  chat_id: z.string().optional(),
  guild_id: z.string().optional(),
  channel_id: z.string().optional(),
  chat_type: z.string().optional(),
  user_id: z.string().optional(),
  profile: z.string(),
});

/** The bindings in order: the most specific match wins, the earlier one on a tie, else `main`. */
export const bindingList = z.object({ bindings: z.array(bindingView) });
