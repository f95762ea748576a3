import { addPerson, createToken } from '@herald/people';
import type { Grant, Person } from '@herald/people';
import type { Db } from '@herald/db';

export interface TestPerson {
  person: Person;
  token: string;
  auth: Record<string, string>;
}

/** A person with the grants given and a personal token, made straight through libs/people. */
export async function personWithToken(db: Db, name: string, grants: Grant[], identities?: string[]): Promise<TestPerson> {
  const person = await addPerson(db, { displayName: name, grants, identities }, 'test');
  const created = await createToken(db, { personId: person.id, name: 'test', maxPerPerson: 10 }, 'test');
  return { person, token: created.token, auth: { authorization: `Bearer ${created.token}` } };
}
