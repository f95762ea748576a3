import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import type { Db } from '@herald/db';
import { createToken, getPerson, listTokens, parseDuration, personOfIdentity, revokeToken } from '@herald/people';
import { Refused, withPeopleDb } from './people-command.ts';

export const TOKENS_USAGE = `herald tokens create --person ID [--expires 30d] [--name laptop]   a personal API token, printed once
herald tokens list --person ID             a person's tokens (never the tokens themselves)
herald tokens revoke TOKEN_ID              refuse the token from now on`;

const ACTOR = 'cli';
const out = (text: string) => process.stdout.write(`${text}\n`);

async function personId(db: Db, ref: string | undefined): Promise<string> {
  if (ref === undefined) throw new Refused('--person ID is needed', 2);
  const person = (await getPerson(db, ref)) ?? (await personOfIdentity(db, ref));
  if (!person) throw new Refused(`--person: no person ${ref}`);
  return person.id;
}

interface Options {
  person: string | undefined;
  expires: string | undefined;
  name: string | undefined;
  maxPerPerson: number;
}

async function create(db: Db, options: Options): Promise<void> {
  const expiresInMs = options.expires === undefined ? undefined : parseDuration(options.expires);
  if (options.expires !== undefined && expiresInMs === undefined) throw new Refused(`--expires: ${JSON.stringify(options.expires)} is not a duration such as 30d, 12h or 90m`, 2);
  const token = await createToken(db, { personId: await personId(db, options.person), name: options.name, expiresInMs, maxPerPerson: options.maxPerPerson }, ACTOR);
  // The token alone on stdout (for a script to capture); what to know about it on stderr.
  out(token.token);
  process.stderr.write(`token ${token.id}${token.name === '' ? '' : ` (${token.name})`}, expires ${token.expiresAt?.toISOString() ?? 'never'}: shown once, store it now\n`);
}

async function runAction(db: Db, action: string | undefined, target: string | undefined, options: Options): Promise<void> {
  if (action === 'create') return create(db, options);
  if (action === 'list') {
    for (const token of await listTokens(db, await personId(db, options.person))) {
      const state = token.revokedAt ? 'revoked' : token.expiresAt && token.expiresAt.getTime() < Date.now() ? 'expired' : 'live';
      out(`${token.id}  ${token.name || '-'}  ${state}  expires ${token.expiresAt?.toISOString() ?? 'never'}  last used ${token.lastUsedAt?.toISOString() ?? 'never'}`);
    }
    return;
  }
  if (action === 'revoke') {
    if (target === undefined) throw new Refused('a token id is needed', 2);
    await revokeToken(db, target, ACTOR);
    out(`revoked token ${target}`);
    return;
  }
  throw new Refused(`unknown tokens action '${action ?? ''}'`, 2);
}

/** `herald tokens create|list|revoke`. */
export async function runTokensCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { person: { type: 'string' }, expires: { type: 'string' }, name: { type: 'string' } },
    allowPositionals: true,
    strict: false,
  });
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const options: Options = { person: text(values.person), expires: text(values.expires), name: text(values.name), maxPerPerson: config.people.tokensPerPerson };
  return withPeopleDb(config, TOKENS_USAGE, (db) => runAction(db, positionals[0], positionals[1], options));
}
