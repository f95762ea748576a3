import { z } from 'zod';
import { grantView } from './people-views.ts';

// Console sign-in (issue 32, point 4; docs/security.md, "Console sign-in").

/** What the sign-in page offers: a personal token always, single sign-on when a provider is configured. */
export const signInMethods = z.object({ token: z.boolean(), oidc: z.boolean() });

/** Who the caller is. `csrf_token` is set for a cookie session: state-changing calls send it as X-Herald-CSRF. */
export const signedInView = z.object({
  person: z.object({ id: z.string(), display_name: z.string(), key: z.string() }).nullable(),
  grants: z.array(grantView),
  csrf_token: z.string().nullable(),
  via: z.enum(['token', 'oidc', 'bootstrap']),
});

export type SignInMethods = z.infer<typeof signInMethods>;
export type SignedInView = z.infer<typeof signedInView>;
