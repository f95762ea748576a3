import { z } from 'zod';

// Shapes every route shares. This folder's `*-views.ts` files import zod alone, so that the console
// (a browser bundle with no Node types) derives its types from them; request schemas that need a
// lib's rules live in the route's own contract module.

/** A timestamp as the API writes it: `Date.toISOString()`. */
export const isoTime = z.string().meta({ format: 'date-time' });

/** Any JSON value the API passes through as stored (a policy, a receipt, a hook list). */
export const anyJson = z.unknown();

/** The one error shape of every route: `{error: {code, message, field?}}` (api-errors.ts). */
export const errorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    field: z.string().optional(),
    // Only a spent limit's 429 names which limit.
    limit: z.string().optional(),
  }),
});

export type ErrorBody = z.infer<typeof errorBody>;

/** A 204's empty body. */
export const noContent = z.null().meta({ description: 'no content' });

/** The path parameter of a row's id (input-hygiene.ts refuses a malformed one with a 400). */
export const idParams = z.object({ id: z.string() });
export const profileParams = z.object({ profile: z.string() });
