import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import type { Db } from '@herald/db';
import {
  addPerson,
  createLinkCode,
  erasePerson,
  exportPerson,
  getPerson,
  grantRole,
  isRole,
  listPeople,
  listTokens,
  normalizeIdentity,
  parseGrant,
  PeopleError,
  personOfIdentity,
  removePerson,
  revokeRole,
} from '@herald/people';
import type { Grant, Person } from '@herald/people';

export const PEOPLE_USAGE = `herald people add NAME [--identity platform:id]... [--role admin|operator:main,ops|member|viewer]...
herald people list                         everyone, with identities and roles
herald people show ID                      one person (ID, or one of their identities), with tokens
herald people grant ID ROLE [--profiles a,b] a role, on every profile or only those listed
herald people revoke ID ROLE               take a role away
herald people remove ID                    remove the person (their data stays; erase removes it)
herald people link-code ID                 a one-time code for /link CODE in a chat (10 minutes)
herald people export ID [--output FILE]    everything of theirs as one JSON file
herald people erase ID                     delete their messages, memory, tokens and identities`;

/** A refusal: one line naming what is wrong, exit 1 (2 for a malformed command line). */
class Refused extends Error {
  readonly code: number;
  constructor(message: string, code = 1) {
    super(message);
    this.code = code;
  }
}

const out = (text: string) => process.stdout.write(`${text}\n`);
const ACTOR = 'cli';

const grantText = (grant: Grant) => `${grant.role}${grant.profiles.length === 0 ? '' : `:${grant.profiles.join(',')}`}`;

function personLine(person: Person): string {
  const grants = person.grants.map(grantText).join(' ') || '(no role)';
  return `${person.id}  ${person.displayName}  ${grants}  ${person.identities.join(', ')}`;
}

/** A person by id, or by one of their identities (`api:ana`, `<platform>:<id>`). */
async function findPerson(db: Db, ref: string | undefined): Promise<Person> {
  if (ref === undefined) throw new Refused('a person id is needed', 2);
  const person = (await getPerson(db, ref)) ?? (await personOfIdentity(db, safeIdentity(ref)));
  if (!person) throw new Refused(`no person ${ref}`);
  return person;
}

function safeIdentity(ref: string): string {
  try {
    return normalizeIdentity(ref);
  } catch {
    return ref;
  }
}

function grantsOf(roles: readonly string[]): Grant[] {
  return roles.map((text) => {
    const grant = parseGrant(text);
    if (!grant) throw new Refused(`--role: ${JSON.stringify(text)} is not a role (admin, operator, member, viewer, optionally :profile,...)`, 2);
    return grant;
  });
}

async function show(db: Db, ref: string | undefined): Promise<void> {
  const person = await findPerson(db, ref);
  out(`person ${person.id}: ${person.displayName}`);
  out(`key: ${person.key}`);
  out(`identities: ${person.identities.join(', ') || '(none)'}`);
  out(`roles: ${person.grants.map(grantText).join(' ') || '(none)'}`);
  const tokens = await listTokens(db, person.id);
  out(`tokens: ${tokens.length === 0 ? '(none)' : ''}`);
  for (const token of tokens) {
    const state = token.revokedAt ? 'revoked' : token.expiresAt && token.expiresAt.getTime() < Date.now() ? 'expired' : 'live';
    out(`  ${token.id}  ${token.name || '-'}  ${state}  expires ${token.expiresAt?.toISOString() ?? 'never'}  last used ${token.lastUsedAt?.toISOString() ?? 'never'}`);
  }
}

interface Options {
  identity: string[];
  role: string[];
  profiles: string | undefined;
  output: string | undefined;
}

async function grant(db: Db, positionals: readonly string[], options: Options): Promise<void> {
  const person = await findPerson(db, positionals[1]);
  const role = positionals[2];
  if (role === undefined) throw new Refused('a role is needed: admin, operator, member or viewer', 2);
  const parsed = parseGrant(options.profiles === undefined ? role : `${role}:${options.profiles}`);
  if (!parsed) throw new Refused(`${role}: not a role (admin, operator, member, viewer)`, 2);
  const now = await grantRole(db, person.id, parsed, ACTOR);
  out(`granted ${grantText(parsed)} to ${now.displayName}`);
}

async function revoke(db: Db, positionals: readonly string[]): Promise<void> {
  const person = await findPerson(db, positionals[1]);
  const role = positionals[2];
  if (role === undefined || !isRole(role)) throw new Refused('a role is needed: admin, operator, member or viewer', 2);
  await revokeRole(db, person.id, role, ACTOR);
  out(`revoked ${role} from ${person.displayName}`);
}

async function exportTo(db: Db, ref: string | undefined, output: string | undefined): Promise<void> {
  const person = await findPerson(db, ref);
  const data = await exportPerson(db, person.id);
  const file = output ?? `herald-person-${person.id}.json`;
  // Their messages and memory: readable by the owner of the file only.
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  out(
    `wrote ${file}: ${data.sessions.length} session(s), ${data.memory.length} memory entr${data.memory.length === 1 ? 'y' : 'ies'}, ${data.skills.length} skill(s), ${data.cron_jobs.length} cron job(s)`,
  );
}

async function runAction(db: Db, positionals: readonly string[], options: Options): Promise<void> {
  const [action, ref] = positionals;
  if (action === 'list' || action === undefined) {
    for (const person of await listPeople(db)) out(personLine(person));
    return;
  }
  if (action === 'add') {
    const name = positionals.slice(1).join(' ');
    if (name.trim() === '') throw new Refused('a display name is needed', 2);
    const person = await addPerson(db, { displayName: name, identities: options.identity, grants: grantsOf(options.role) }, ACTOR);
    out(`added ${personLine(person)}`);
    return;
  }
  if (action === 'show') return show(db, ref);
  if (action === 'grant') return grant(db, positionals, options);
  if (action === 'revoke') return revoke(db, positionals);
  if (action === 'remove') {
    const person = await findPerson(db, ref);
    await removePerson(db, person.id, ACTOR);
    out(`removed ${person.displayName}; their data stays under ${person.key} (herald people erase removes it)`);
    return;
  }
  if (action === 'link-code') {
    const person = await findPerson(db, ref);
    const code = await createLinkCode(db, person.id, ACTOR);
    out(`${code.code}`);
    process.stderr.write(`send /link ${code.code} in a chat before ${code.expiresAt.toISOString()} (once)\n`);
    return;
  }
  if (action === 'export') return exportTo(db, ref, options.output);
  if (action === 'erase') {
    const person = await findPerson(db, ref);
    const counts = await erasePerson(db, person.id, ACTOR);
    out(`erased ${person.displayName}: ${counts.messages} message(s), ${counts.memory} memory entr${counts.memory === 1 ? 'y' : 'ies'}, their tokens and identities`);
    return;
  }
  throw new Refused(`unknown people action '${action}'`, 2);
}

/** Runs a command body on a short-lived pool; PeopleError and Refused become one line and an exit code. */
export async function withPeopleDb(config: Config, usage: string, body: (db: Db) => Promise<void>): Promise<number> {
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    await body(db);
    return 0;
  } catch (error) {
    if (error instanceof PeopleError) {
      process.stderr.write(`herald: ${error.message}\n`);
      return 1;
    }
    if (!(error instanceof Refused)) throw error;
    process.stderr.write(`herald: ${error.message}\n${error.code === 2 ? `\n${usage}\n` : ''}`);
    return error.code;
  } finally {
    await db.destroy();
  }
}

export { Refused };

/** `herald people ...`: straight on Postgres, through the same lib as the API. */
export async function runPeopleCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { identity: { type: 'string', multiple: true }, role: { type: 'string', multiple: true }, profiles: { type: 'string' }, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
    strict: false,
  });
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  const options: Options = {
    identity: strings(values.identity),
    role: strings(values.role),
    profiles: typeof values.profiles === 'string' ? values.profiles : undefined,
    output: typeof values.output === 'string' ? values.output : undefined,
  };
  return withPeopleDb(config, PEOPLE_USAGE, (db) => runAction(db, positionals, options));
}
