import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { apiUserId } from '@herald/core';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import { deleteMemoryEntry, readMemory } from '@herald/knowledge';
import { profileDocuments, profileRecord, putProfileDocument, updateProfileSettings } from '@herald/profiles';
import { sessionRecord } from '@herald/session';
import type { Db } from '@herald/db';
import { usageError } from './setup-error.ts';

export const ADMIN_USAGE = `herald memory [--profile P] [--user ID]      list the profile's memory (or a person's)
herald memory delete ENTRY_ID [--profile P]  delete one entry
herald prompt SESSION_ID                     print a session's stored system prompt
herald profile [--profile P]                 show identity, limits and context documents
herald profile identity FILE [--profile P]   set the identity document from a file
herald profile doc NAME FILE [--profile P]   set a context document (e.g. AGENTS.md) from a file`;

async function withDb<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

function fail(message: string): never {
  throw usageError(message, ADMIN_USAGE);
}

type Args = { profileId: string; user: string | undefined; positionals: string[] };

const out = (text: string) => process.stdout.write(`${text}\n`);

async function memoryCommand(db: Db, { profileId, user, positionals }: Args): Promise<void> {
  if (positionals[0] === 'delete') {
    const id = positionals[1] ?? fail('memory delete needs an entry id');
    if (!(await deleteMemoryEntry(db, profileId, id))) fail(`no memory entry ${id} in profile ${profileId}`);
    out(`deleted memory entry ${id}`);
    return;
  }
  const state = await readMemory(db, { profileId, store: user === undefined ? 'memory' : 'user', userId: user === undefined ? '' : apiUserId(user) });
  out(`${user === undefined ? `memory of profile ${profileId}` : `user profile of ${user}`}: ${state.chars}/${state.limit} chars`);
  for (const entry of state.entries) out(`  [${entry.id}] ${entry.content}`);
}

async function promptCommand(db: Db, { positionals }: Args): Promise<void> {
  const id = positionals[0] ?? fail('prompt needs a session id');
  // An id that is no uuid is no session either.
  const session = await sessionRecord(db, id).catch(() => undefined);
  if (!session) fail(`no session ${id}`);
  out(session.systemPrompt ?? '(not built yet: the session has had no turn)');
}

async function showProfile(db: Db, profileId: string): Promise<void> {
  const profile = await profileRecord(db, profileId);
  if (!profile) fail(`no profile ${profileId}`);
  const documents = await profileDocuments(db, profileId);
  out(`profile ${profile.id} (${profile.display_name}); memory limit ${profile.memory_char_limit}, user limit ${profile.user_char_limit}`);
  out(`identity: ${profile.identity === '' ? '(default)' : profile.identity}`);
  for (const document of documents) out(`document ${document.name}: ${document.content.length} chars`);
}

async function profileCommand(db: Db, { profileId, positionals }: Args): Promise<void> {
  const [action, ...rest] = positionals;
  if (action === 'identity') {
    const file = rest[0] ?? fail('profile identity needs a file');
    await updateProfileSettings(db, profileId, { identity: await readFile(file, 'utf8') });
    out(`identity of ${profileId} set from ${file}; new sessions use it`);
    return;
  }
  if (action === 'doc') {
    const name = rest[0] ?? fail('profile doc needs a name');
    const file = rest[1] ?? fail('profile doc needs a file');
    const content = await readFile(file, 'utf8');
    await putProfileDocument(db, profileId, name, content);
    out(`document ${name} of ${profileId} set from ${file}; new sessions use it`);
    return;
  }
  if (action !== undefined) fail(`unknown profile action '${action}'`);
  await showProfile(db, profileId);
}

const COMMANDS: Record<string, (db: Db, args: Args) => Promise<void>> = { memory: memoryCommand, prompt: promptCommand, profile: profileCommand };

/** Operator commands that read and edit Postgres directly (they need DATABASE_URL, not the API). */
export async function runAdminCommand(command: string, argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { profile: { type: 'string', default: 'main' }, user: { type: 'string' } },
    allowPositionals: true,
  });
  const handler = COMMANDS[command];
  if (handler === undefined) return;
  await withDb(config, (db) => handler(db, { profileId: values.profile ?? 'main', user: values.user, positionals }));
}
