import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import { apiUserId, parseUserId } from '@herald/core';
import { withAudit } from '@herald/audit';
import type { Database, Db, ProfileCache, Role } from '@herald/db';
import type { Grant } from './roles.ts';
import type { Principal } from './principal.ts';

type Executor = Db | Transaction<Database>;

export interface Person {
  id: string;
  displayName: string;
  /** The user id memory, search, quotas and sessions know the person by (docs/decisions/2026-12-06-person-key.md). */
  key: string;
  identities: string[];
  grants: Grant[];
  createdAt: Date;
  updatedAt: Date;
}

/** A refused change to people, with the field at fault: the API's 400/404/409, the CLI's message. */
export class PeopleError extends Error {
  override readonly name = 'PeopleError';
  readonly status: 400 | 404 | 409;
  readonly field: string | undefined;
  constructor(status: 400 | 404 | 409, message: string, field?: string) {
    super(message);
    this.status = status;
    this.field = field;
  }
}

/** An identity as people write it: `<platform>:<id>`, `api:ana`, or a bare `ana` (the API's). */
export function normalizeIdentity(value: string): string {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > 256 || /[\s\0]/.test(trimmed)) throw new PeopleError(400, `identity: expected a platform-qualified user id such as api:ana`, 'identity');
  const qualified = apiUserId(trimmed);
  if (parseUserId(qualified) === undefined) throw new PeopleError(400, `identity: ${qualified} is not a known platform's user id`, 'identity');
  return qualified;
}

async function loadPeople(db: Executor, ids: readonly string[] | undefined): Promise<Person[]> {
  let query = db.selectFrom('people').selectAll().orderBy('created_at').orderBy('id');
  if (ids !== undefined) {
    if (ids.length === 0) return [];
    query = query.where('id', 'in', ids);
  }
  const rows = await query.execute();
  if (rows.length === 0) return [];
  const personIds = rows.map((row) => row.id);
  const [identities, grants] = await Promise.all([
    db.selectFrom('person_identities').select(['person_id', 'identity']).where('person_id', 'in', personIds).orderBy('linked_at').orderBy('identity').execute(),
    db.selectFrom('role_grants').select(['person_id', 'role', 'profiles']).where('person_id', 'in', personIds).orderBy('id').execute(),
  ]);
  return rows.map((row) => ({
    id: row.id,
    displayName: row.display_name,
    key: row.key,
    identities: identities.filter((i) => i.person_id === row.id).map((i) => i.identity),
    grants: grants.filter((g) => g.person_id === row.id).map((g) => ({ role: g.role, profiles: g.profiles })),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}

export function listPeople(db: Executor): Promise<Person[]> {
  return loadPeople(db, undefined);
}

/** The person, or undefined (also for a malformed id: never a 500). */
export async function getPerson(db: Executor, id: string): Promise<Person | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  return (await loadPeople(db, [id]))[0];
}

export async function requirePerson(db: Executor, id: string): Promise<Person> {
  const person = await getPerson(db, id);
  if (!person) throw new PeopleError(404, `person ${id}: not found`, 'id');
  return person;
}

/** The person an identity (or a key) belongs to. */
export async function personOfIdentity(db: Executor, identity: string): Promise<Person | undefined> {
  const row = await db.selectFrom('person_identities').select('person_id').where('identity', '=', identity).executeTakeFirst();
  return row ? getPerson(db, row.person_id) : undefined;
}

/**
 * The user id a message from `userId` is stored under: the key of the person the identity is
 * linked to, or the identity itself when it belongs to no one. Called where a message arrives
 * (chat platforms, the API), so every table downstream sees one id per person. With the process's
 * profile cache the answer is kept until the people tables change.
 */
export async function personKeyOf(db: Executor, userId: string, cache?: ProfileCache): Promise<string> {
  const read = async () => {
    const row = await db.selectFrom('person_identities as i').innerJoin('people as p', 'p.id', 'i.person_id').select('p.key').where('i.identity', '=', userId).executeTakeFirst();
    return row?.key ?? userId;
  };
  // Per process, dropped when a link or a key changes (migrations/0088_shared_cache_notices.sql):
  // without it every inbound message costs this round trip.
  // Never from inside a transaction: what it reads may not commit.
  return cache === undefined || db.isTransaction ? read() : cache.shared(`person-key:${userId}`, read);
}

/**
 * HERALD_OPERATORS as people see it: the configured identities, plus the keys of the people they
 * were linked to, plus everyone holding an operator or admin grant on every profile.
 */
export async function effectiveOperators(db: Executor, configured: readonly string[]): Promise<string[]> {
  const linked =
    configured.length === 0 ? [] : await db.selectFrom('person_identities as i').innerJoin('people as p', 'p.id', 'i.person_id').select('p.key').where('i.identity', 'in', configured).execute();
  const granted = await db
    .selectFrom('role_grants as g')
    .innerJoin('people as p', 'p.id', 'g.person_id')
    .select('p.key')
    .where('g.role', 'in', ['admin', 'operator'])
    .where(sql<boolean>`cardinality(g.profiles) = 0`)
    .execute();
  return [...new Set([...configured, ...linked.map((r) => r.key), ...granted.map((r) => r.key)])];
}

/** What a person may do, from their grants and HERALD_OPERATORS (an operator identity is an operator grant). */
export function principalOf(person: Person, operators: readonly string[], tokenId?: string): Principal {
  const isOperator = person.identities.some((identity) => operators.includes(identity)) || operators.includes(person.key);
  const grants: Grant[] = [...person.grants];
  if (isOperator && !grants.some((g) => g.role === 'operator' && g.profiles.length === 0)) grants.push({ role: 'operator', profiles: [] });
  return { kind: 'person', personId: person.id, key: person.key, grants, tokenId };
}

export interface NewPerson {
  displayName: string;
  /** Identities to link; the first becomes the key. Without any, the key is `api:<id>`. */
  identities?: readonly string[] | undefined;
  grants?: readonly Grant[] | undefined;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200 || /\0/.test(trimmed)) throw new PeopleError(400, 'display_name: expected 1 to 200 characters', 'display_name');
  return trimmed;
}

function checkGrant(grant: Grant): Grant {
  for (const profile of grant.profiles) {
    if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(profile)) throw new PeopleError(400, `profiles: ${JSON.stringify(profile)} is not a profile name`, 'profiles');
  }
  return { role: grant.role, profiles: [...new Set(grant.profiles)].sort() };
}

/** Adds a person with their identities and grants, in one audited transaction. */
export async function addPerson(db: Db, input: NewPerson, actor: string): Promise<Person> {
  const displayName = checkName(input.displayName);
  const identities = [...new Set((input.identities ?? []).map(normalizeIdentity))];
  const grants = (input.grants ?? []).map(checkGrant);
  const id = await withAudit(db, async (trx) => {
    const row = await trx
      .insertInto('people')
      .values({ display_name: displayName, key: sql<string>`'pending:' || gen_random_uuid()` })
      .returning('id')
      .executeTakeFirstOrThrow();
    const key = identities[0] ?? `api:${row.id}`;
    await trx.updateTable('people').set({ key }).where('id', '=', row.id).execute();
    for (const identity of identities.length === 0 ? [key] : identities) await linkIn(trx, row.id, key, identity);
    for (const grant of grants) await putGrant(trx, row.id, grant);
    return { result: row.id, audit: { kind: 'admin_change', actor, subject: `person:${row.id}`, detail: { action: 'add', grants: grants.map((g) => g.role) } } };
  });
  return requirePerson(db, id);
}

async function linkIn(trx: Transaction<Database>, personId: string, key: string, identity: string): Promise<void> {
  const taken = await trx.selectFrom('person_identities').select('person_id').where('identity', '=', identity).forUpdate().executeTakeFirst();
  if (taken && taken.person_id !== personId) throw new PeopleError(409, `identity: ${identity} is already linked to another person`, 'identity');
  if (taken) return;
  await trx.insertInto('person_identities').values({ identity, person_id: personId }).execute();
  await sql`SELECT herald_rekey_person(${identity}, ${key})`.execute(trx);
}

async function putGrant(trx: Transaction<Database>, personId: string, grant: Grant): Promise<void> {
  await trx
    .insertInto('role_grants')
    .values({ person_id: personId, role: grant.role, profiles: [...grant.profiles] })
    .onConflict((oc) => oc.columns(['person_id', 'role']).doUpdateSet({ profiles: [...grant.profiles] }))
    .execute();
}

/** Links an identity to a person in the caller's transaction: its past moves to the person's key. */
export async function linkIdentity(trx: Transaction<Database>, personId: string, identity: string): Promise<void> {
  const person = await trx.selectFrom('people').select('key').where('id', '=', personId).forUpdate().executeTakeFirst();
  if (!person) throw new PeopleError(404, `person ${personId}: not found`, 'id');
  await linkIn(trx, personId, person.key, normalizeIdentity(identity));
  await trx
    .updateTable('people')
    .set({ updated_at: sql`now()` })
    .where('id', '=', personId)
    .execute();
}

export interface PersonPatch {
  displayName?: string | undefined;
  link?: readonly string[] | undefined;
  unlink?: readonly string[] | undefined;
}

/**
 * Renames, links and unlinks. Unlinking leaves the past with the person; the identity's next
 * message is its own again. The key itself cannot be unlinked: it names the person's data.
 */
export async function updatePerson(db: Db, id: string, patch: PersonPatch, actor: string): Promise<Person> {
  await requirePerson(db, id);
  const displayName = patch.displayName === undefined ? undefined : checkName(patch.displayName);
  const unlink = (patch.unlink ?? []).map(normalizeIdentity);
  await withAudit(db, async (trx) => {
    if (displayName !== undefined)
      await trx
        .updateTable('people')
        .set({ display_name: displayName, updated_at: sql`now()` })
        .where('id', '=', id)
        .execute();
    for (const identity of patch.link ?? []) await linkIdentity(trx, id, identity);
    const person = await trx.selectFrom('people').select('key').where('id', '=', id).executeTakeFirstOrThrow();
    for (const identity of unlink) {
      if (identity === person.key) throw new PeopleError(400, `unlink: ${identity} is the person's key and stays linked`, 'unlink');
      await trx.deleteFrom('person_identities').where('person_id', '=', id).where('identity', '=', identity).execute();
    }
    return { result: undefined, audit: { kind: 'admin_change', actor, subject: `person:${id}`, detail: { action: 'update', linked: (patch.link ?? []).length, unlinked: unlink.length } } };
  });
  return requirePerson(db, id);
}

/** Grants a role (replacing the profiles of an existing grant of that role). */
export async function grantRole(db: Db, id: string, grant: Grant, actor: string): Promise<Person> {
  await requirePerson(db, id);
  const checked = checkGrant(grant);
  await withAudit(db, async (trx) => {
    await putGrant(trx, id, checked);
    return { result: undefined, audit: { kind: 'admin_change', actor, subject: `person:${id}`, detail: { action: 'grant', role: checked.role, profiles: checked.profiles } } };
  });
  return requirePerson(db, id);
}

export async function revokeRole(db: Db, id: string, role: Role, actor: string): Promise<Person> {
  await requirePerson(db, id);
  await withAudit(db, async (trx) => {
    const gone = await trx.deleteFrom('role_grants').where('person_id', '=', id).where('role', '=', role).executeTakeFirst();
    if (gone.numDeletedRows === 0n) throw new PeopleError(404, `role: the person holds no ${role} grant`, 'role');
    return { result: undefined, audit: { kind: 'admin_change', actor, subject: `person:${id}`, detail: { action: 'revoke', role } } };
  });
  return requirePerson(db, id);
}

/** Removes the person, their identities, grants, tokens and codes; their data stays under their key (erase removes it). */
export async function removePerson(db: Db, id: string, actor: string): Promise<void> {
  await requirePerson(db, id);
  await withAudit(db, async (trx) => {
    await trx.deleteFrom('people').where('id', '=', id).execute();
    return { result: undefined, audit: { kind: 'admin_change', actor, subject: `person:${id}`, detail: { action: 'remove' } } };
  });
}

/** Whether some person holds an admin grant on every profile (HERALD_API_TOKEN_DISABLED applies then). */
export async function adminExists(db: Executor): Promise<boolean> {
  const row = await db
    .selectFrom('role_grants')
    .select('id')
    .where('role', '=', 'admin')
    .where(sql<boolean>`cardinality(profiles) = 0`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
