import type { OidcConfig } from '@herald/core';
import { SIGN_IN_PLATFORM } from '@herald/core';
import type { Db } from '@herald/db';
import { addPerson, isRole, PeopleError, personOfIdentity } from '@herald/people';
import type { Grant, Person } from '@herald/people';
import type { OidcIdentity } from './oidc-client.ts';

/** The grant a first sign-in gets: the first rule whose claim value the person holds, else `member`. */
export function firstGrant(identity: OidcIdentity, settings: OidcConfig): Grant {
  const rule = settings.roleRules.find((candidate) => identity.groups.includes(candidate.value));
  if (!rule || !isRole(rule.role)) return { role: 'member', profiles: [] };
  return { role: rule.role, profiles: rule.profiles };
}

/** HERALD_OIDC_ROLES names roles that exist: checked when the ingress starts, naming the setting. */
export function unknownOidcRoles(settings: OidcConfig | undefined): string[] {
  return (settings?.roleRules ?? []).filter((rule) => !isRole(rule.role)).map((rule) => rule.role);
}

/**
 * The person an OpenID sign-in names: the one linked to `oidc:<subject>`, or, on a first sign-in,
 * a new person with that identity and the mapped role. Later sign-ins never change roles: after the
 * first, grants are the admins' to manage (herald people grant).
 */
export async function personOfSignIn(db: Db, identity: OidcIdentity, settings: OidcConfig): Promise<Person> {
  const key = `${SIGN_IN_PLATFORM}:${identity.subject}`;
  const known = await personOfIdentity(db, key);
  if (known) return known;
  try {
    return await addPerson(db, { displayName: identity.name.slice(0, 200), identities: [key], grants: [firstGrant(identity, settings)] }, key);
  } catch (error) {
    // Two first sign-ins at once (two tabs): the other one created the person; use it.
    const raced = error instanceof PeopleError && error.status === 409 ? await personOfIdentity(db, key) : undefined;
    if (raced) return raced;
    throw error;
  }
}
