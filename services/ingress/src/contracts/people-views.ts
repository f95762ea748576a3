import { z } from 'zod';
import { isoTime } from './common.ts';

// People, roles and personal tokens (issue 32; docs/security.md).

export const roleName = z.enum(['admin', 'operator', 'member', 'viewer']);

/** A role, on every profile (`profiles` empty) or only the profiles listed. */
export const grantView = z.object({ role: roleName, profiles: z.array(z.string()) });

export const tokenView = z.object({
  id: z.string(),
  person_id: z.string(),
  name: z.string(),
  created_at: isoTime,
  expires_at: isoTime.nullable(),
  last_used_at: isoTime.nullable(),
  revoked_at: isoTime.nullable(),
});

export const personView = z.object({
  id: z.string(),
  display_name: z.string(),
  /** The user id memory, search and quotas know the person by. */
  key: z.string(),
  identities: z.array(z.string()),
  grants: z.array(grantView),
  created_at: isoTime,
  updated_at: isoTime,
});

/** One person with their tokens (never the tokens themselves). */
export const personDetail = personView.extend({ tokens: z.array(tokenView) });

export const peopleList = z.object({ people: z.array(personView) });

/** A new token: `token` is shown here once and never again. */
export const createdToken = tokenView.extend({ token: z.string() });

export const linkCodeView = z.object({ code: z.string(), person_id: z.string(), expires_at: isoTime });

/**
 * GET /v1/people/suggestions: people Herald knows, for a field that asks for one. `user_id` is
 * platform-qualified (`api:alice`, `<platform>:42`): what routes that take a person accept.
 */
export const personSuggestions = z.object({
  people: z.array(z.object({ user_id: z.string(), name: z.string().nullable(), last_seen_at: isoTime })),
});

export type PersonSuggestions = z.infer<typeof personSuggestions>;
export type PersonSuggestion = PersonSuggestions['people'][number];
