/**
 * People are named by their platform and the platform's own id (`<platform>:42`,
 * `api:u1`). Two platforms may hand out the same bare id to different people, so a bare id never
 * decides whose memory, search scope or approval something is. This module is the one definition
 * of the qualified form; everything that stores or compares a person's id goes through it.
 */

import { PERSON_PLATFORMS } from './platform-registry.ts';

export type PersonPlatform = (typeof PERSON_PLATFORMS)[number];

export interface PersonId {
  platform: PersonPlatform;
  /** The platform's own id of the person, as the platform spells it. */
  id: string;
}

function isPersonPlatform(value: string): value is PersonPlatform {
  return (PERSON_PLATFORMS as readonly string[]).includes(value);
}

/** `telegram` + `42` → `telegram:42`. */
export function qualifyUserId(platform: PersonPlatform, id: string): string {
  if (id === '') throw new Error(`empty ${platform} user id`);
  return `${platform}:${id}`;
}

/** The platform and bare id of a qualified id, or undefined when it is not one. */
export function parseUserId(value: string): PersonId | undefined {
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1) return undefined;
  const platform = value.slice(0, colon);
  return isPersonPlatform(platform) ? { platform, id: value.slice(colon + 1) } : undefined;
}

/**
 * A user id as the HTTP API, the CLI and profile settings take it: a qualified id stays as it is
 * (`telegram:42`), anything else is the API platform's own id (`u1` → `api:u1`), so `user_id=u1`
 * names the same person in a message, a search and an approval.
 */
export function apiUserId(value: string): string {
  return parseUserId(value) === undefined ? qualifyUserId('api', value) : value;
}
