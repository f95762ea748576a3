import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** One routing rule that sends traffic to a profile (issue 31 point 5). */
export interface ProfileBinding {
  index: number;
  match: Record<string, string>;
}

/**
 * The bindings that route traffic to `profileId`: shown by the console and `herald profiles show`,
 * and a profile that has any cannot be deleted. Bindings do not exist yet: the bindings work fills
 * this in from its table, and everything that asks (deletion, views) already goes through here.
 */
export async function bindingsOfProfile(db: Kysely<Database>, profileId: string): Promise<ProfileBinding[]> {
  void db;
  void profileId;
  return [];
}
