import { covers, grantsOwn, grantsWhole } from './roles.ts';
import type { Grant, Need } from './roles.ts';

/**
 * Who is calling, however they proved it (the bootstrap token, a personal token, later a console
 * session): the route table decides on this alone, so another way of signing in only has to build
 * one of these (principalOf in people-store.ts does it for a person).
 */
export interface Principal {
  kind: 'bootstrap' | 'person';
  /** The person's id; null for the bootstrap token. */
  personId: string | null;
  /** The user id they act as (memory, search, quotas, audit actor): the person's key, `api` for the bootstrap token. */
  key: string;
  grants: readonly Grant[];
  /** The personal token the request carried, if any. */
  tokenId?: string | undefined;
}

/** HERALD_API_TOKEN (or an open loopback API): everything, as before people existed. */
export const BOOTSTRAP_PRINCIPAL: Principal = Object.freeze<Principal>({ kind: 'bootstrap', personId: null, key: 'api', grants: [{ role: 'admin', profiles: [] }] });

/** What a resource is, for a decision: its profile and the person who owns it (a session's starter, a job's creator). */
export interface ResourceOwner {
  profileId?: string | undefined;
  ownerKey?: string | null | undefined;
}

/** Whether some grant could ever satisfy `need` (the route is open to the role at all): otherwise 403. */
export function mayUse(principal: Principal, need: Need): boolean {
  return principal.grants.some((grant) => grantsOwn(grant, need));
}

/** Whether the principal may do `need` to this resource: by a grant on its profile, or as its owner. */
export function mayAct(principal: Principal, need: Need, resource: ResourceOwner): boolean {
  const own = resource.ownerKey !== undefined && resource.ownerKey !== null && resource.ownerKey === principal.key;
  return principal.grants.some((grant) => {
    if (!covers(grant, resource.profileId)) return false;
    return grantsWhole(grant, need) || (own && grantsOwn(grant, need));
  });
}

/**
 * How a list is narrowed for the principal: `all` (no filter), or profiles it sees whole, or only
 * what it owns (in some profiles, or all of them). undefined: nothing at all.
 */
export type ListScope = { kind: 'all' } | { kind: 'profiles'; profiles: readonly string[] } | { kind: 'own'; ownerKey: string; profiles: readonly string[] | 'all' };

export function listScope(principal: Principal, need: Need): ListScope | undefined {
  const whole = principal.grants.filter((grant) => grantsWhole(grant, need));
  if (whole.some((grant) => grant.profiles.length === 0)) return { kind: 'all' };
  if (whole.length > 0) return { kind: 'profiles', profiles: [...new Set(whole.flatMap((grant) => grant.profiles))] };
  const own = principal.grants.filter((grant) => grantsOwn(grant, need));
  if (own.length === 0) return undefined;
  const profiles = own.some((grant) => grant.profiles.length === 0) ? 'all' : [...new Set(own.flatMap((grant) => grant.profiles))];
  return { kind: 'own', ownerKey: principal.key, profiles };
}
