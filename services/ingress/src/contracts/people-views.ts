import { z } from 'zod';
import { isoTime } from './common.ts';

/**
 * GET /v1/people/suggestions: people Herald knows, for a field that asks for one. `user_id` is
 * platform-qualified (`api:alice`, `<platform>:42`): what routes that take a person accept.
 */
export const personSuggestions = z.object({
  people: z.array(z.object({ user_id: z.string(), name: z.string().nullable(), last_seen_at: isoTime })),
});

export type PersonSuggestions = z.infer<typeof personSuggestions>;
export type PersonSuggestion = PersonSuggestions['people'][number];
