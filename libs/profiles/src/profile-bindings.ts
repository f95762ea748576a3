import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { matchOf } from './binding-rules.ts';
import { readBindings } from './binding-store.ts';

/** One routing rule that sends traffic to a profile (issue 31 point 5): its index in the list and what it matches. */
export interface ProfileBinding {
  index: number;
  match: Record<string, string>;
}

/**
 * The bindings that route traffic to `profileId`: shown by the console and `herald profiles show`,
 * and a profile that has any cannot be deleted.
 */
export async function bindingsOfProfile(db: Kysely<Database>, profileId: string): Promise<ProfileBinding[]> {
  const rules = await readBindings(db);
  return rules.flatMap((rule, index) => (rule.profile === profileId ? [{ index, match: matchOf(rule) }] : []));
}
