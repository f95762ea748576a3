import type { Role } from '@herald/db';

/**
 * The roles of issue 32, as docs/security.md defines them:
 * - admin: everything, including providers, bindings, hooks and people;
 * - operator: runs, dead letters, cron jobs, approvals and sessions of the profiles granted;
 * - member: their own sessions, memory, cron jobs and search; chat through the API;
 * - viewer: read-only on the profiles granted.
 */
export const ROLES = ['admin', 'operator', 'member', 'viewer'] as const satisfies readonly Role[];

/** One role, for every profile (`profiles` empty) or only the profiles listed. */
export interface Grant {
  role: Role;
  profiles: readonly string[];
}

/**
 * What a route asks of its caller (services/ingress/src/route-permissions.ts maps every route to one):
 * - signed-in: any person or the bootstrap token;
 * - chat: send messages as oneself;
 * - read: read; a member reads only what is theirs;
 * - write-own: change; a member changes only what is theirs;
 * - operate: operator work (runs, dead letters, approvals of others) on the profiles granted;
 * - admin: administration.
 */
export const NEEDS = ['signed-in', 'chat', 'read', 'write-own', 'operate', 'admin'] as const;
export type Need = (typeof NEEDS)[number];

/** What each role may do on the profiles it covers, regardless of who owns the resource. */
const WHOLE_PROFILE: Readonly<Record<Role, readonly Need[]>> = {
  admin: NEEDS,
  operator: ['signed-in', 'chat', 'read', 'write-own', 'operate'],
  member: ['signed-in', 'chat'],
  viewer: ['signed-in', 'read'],
};

/** What a member may also do on what is their own. */
const OWN_ONLY: readonly Need[] = ['read', 'write-own'];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** Whether the grant covers the profile; with no profile (a cluster-wide route), only an unlimited grant does. */
export function covers(grant: Grant, profileId: string | undefined): boolean {
  if (grant.profiles.length === 0) return true;
  return profileId !== undefined && grant.profiles.includes(profileId);
}

/** The grant lets its holder do `need` to anything in the profiles it covers. */
export function grantsWhole(grant: Grant, need: Need): boolean {
  return WHOLE_PROFILE[grant.role].includes(need);
}

/** The grant lets its holder do `need` to what they own. */
export function grantsOwn(grant: Grant, need: Need): boolean {
  return grantsWhole(grant, need) || (grant.role === 'member' && OWN_ONLY.includes(need));
}

/** `admin`, `operator:main,ops` → a grant; undefined when it is not one. */
export function parseGrant(text: string): Grant | undefined {
  const [role, profiles] = text.split(':', 2);
  if (role === undefined || !isRole(role)) return undefined;
  const list = (profiles ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return { role, profiles: list };
}
