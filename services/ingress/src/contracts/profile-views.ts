import { z } from 'zod';
import { modelSettingsSchema } from '@herald/profiles';
import { anyJson, isoTime } from './common.ts';

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
  model: modelSettingsSchema.nullable(),
  /** Set once the profile is deleted: its records stay, read-only. */
  deleted_at: isoTime.nullable(),
});

export const documentView = z.object({ profile: z.string(), name: z.string(), content: z.string() });

/** A profile's own hooks, as stored (the request's rules: @herald/hooks profileHooksSchema). */
export const hooksView = z.object({ hooks: z.array(z.record(z.string(), anyJson)) });

export type ProfileView = z.infer<typeof profileView>;

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
