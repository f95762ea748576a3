import { z } from 'zod';
import { commaList, integer, optionalText, url } from './fields.ts';

/** One claim value and the role it gives a person signing in (limited to profiles when listed). */
export interface OidcRoleRule {
  value: string;
  role: string;
  profiles: string[];
}

/** Single sign-on for the console through an OpenID provider (authorization code with PKCE). */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** E-mail domains allowed to sign in; empty: any verified address. */
  allowedDomains: string[];
  /** The ID token claim holding group names (a string or a list). */
  roleClaim: string;
  /** The first rule whose value the claim holds gives the role of a first sign-in; none: `member`. */
  roleRules: OidcRoleRule[];
}

export interface SignInConfig {
  oidc: OidcConfig | undefined;
  /** How long a console session lasts without signing in again. */
  consoleSessionHours: number;
}

/** `value=role` or `value=role@profile+profile`; the role's name is checked where roles are defined. */
const RULE = /^([^=\s]+)=([a-z]+)(?:@([a-z0-9-]+(?:\+[a-z0-9-]+)*))?$/;

function roleRules(items: string[], ctx: z.RefinementCtx): OidcRoleRule[] {
  return items.flatMap((item) => {
    const match = RULE.exec(item);
    if (!match) {
      ctx.addIssue({ code: 'custom', path: ['HERALD_OIDC_ROLES'], message: `"${item}": expected claim-value=role or claim-value=role@profile+profile` });
      return [];
    }
    return [{ value: match[1]!, role: match[2]!, profiles: match[3]?.split('+') ?? [] }];
  });
}

export const signInSection = z
  .object({
    HERALD_OIDC_ISSUER: optionalText.pipe(url(/^https?:$/, 'https://accounts.example.com').optional()),
    HERALD_OIDC_CLIENT_ID: optionalText,
    HERALD_OIDC_CLIENT_SECRET: optionalText,
    HERALD_OIDC_ALLOWED_DOMAINS: commaList,
    HERALD_OIDC_ROLE_CLAIM: optionalText,
    HERALD_OIDC_ROLES: commaList,
    HERALD_CONSOLE_SESSION_HOURS: integer(1, 24 * 90).default(12),
  })
  .superRefine((e, ctx) => {
    const set = [e.HERALD_OIDC_ISSUER, e.HERALD_OIDC_CLIENT_ID, e.HERALD_OIDC_CLIENT_SECRET].filter((value) => value !== undefined).length;
    if (set === 0 || set === 3) return;
    for (const name of ['HERALD_OIDC_ISSUER', 'HERALD_OIDC_CLIENT_ID', 'HERALD_OIDC_CLIENT_SECRET'] as const) {
      if (e[name] === undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'required with the other HERALD_OIDC_ settings (issuer, client id and secret go together)' });
    }
  })
  .transform((e, ctx): SignInConfig => {
    const rules = roleRules(e.HERALD_OIDC_ROLES, ctx);
    const oidc =
      e.HERALD_OIDC_ISSUER !== undefined && e.HERALD_OIDC_CLIENT_ID !== undefined && e.HERALD_OIDC_CLIENT_SECRET !== undefined
        ? {
            issuer: e.HERALD_OIDC_ISSUER,
            clientId: e.HERALD_OIDC_CLIENT_ID,
            clientSecret: e.HERALD_OIDC_CLIENT_SECRET,
            allowedDomains: e.HERALD_OIDC_ALLOWED_DOMAINS.map((domain) => domain.toLowerCase()),
            roleClaim: e.HERALD_OIDC_ROLE_CLAIM ?? 'groups',
            roleRules: rules,
          }
        : undefined;
    return { oidc, consoleSessionHours: e.HERALD_CONSOLE_SESSION_HOURS };
  });
