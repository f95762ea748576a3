import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import type { Db } from '@herald/db';
import { bindingsOfProfile, createProfile, deleteProfile, listProfiles, profileDocuments, profileModelSettings, profileNameSchema, profileRecord, profileState } from '@herald/profiles';
import type { ModelSettings, ProfileCompanions } from '@herald/profiles';
import { copyProfileHooks } from '@herald/hooks';
import { copyProfileSkills, seedProfileBuiltinSkills } from '@herald/knowledge';
import { pauseProfileJobs } from '@herald/cron';

/** A profile's hooks and skills go with its copy, Herald's skills into every new one, its cron jobs stop with its deletion (each lib's own function). */
const COMPANIONS: ProfileCompanions = {
  async copy(trx, name, from) {
    await copyProfileHooks(trx, name, from);
    await copyProfileSkills(trx, name, from);
  },
  // Herald's own skills at once, not at the next migrate.
  seed: (trx, name) => seedProfileBuiltinSkills(trx, name),
  retire: (trx, name) => pauseProfileJobs(trx, name),
};

export const PROFILES_USAGE = `herald profiles list                       the profiles, their models and bindings
herald profiles show NAME                  one profile: identity, models, bindings, documents
herald profiles create NAME [--from OTHER] a new profile, or a copy of OTHER (never its memory or sessions)
herald profiles delete NAME                stop a profile taking messages; its sessions stay readable`;

/** A refusal: one line naming what is wrong, exit 1 (2 for a malformed command line). */
class Refused extends Error {
  readonly code: number;
  constructor(message: string, code = 1) {
    super(message);
    this.code = code;
  }
}

const out = (text: string) => process.stdout.write(`${text}\n`);

function modelLine(model: ModelSettings | null): string {
  if (model === null) return "the deployment's (HERALD_MODEL)";
  const fallbacks = model.fallbacks?.length ? ` then ${model.fallbacks.join(', ')}` : '';
  const extra = [
    model.summary ? `summary ${model.summary}` : '',
    model.delegation ? `delegation ${model.delegation}` : '',
    model.context_tokens ? `context ${model.context_tokens} tokens` : '',
  ].filter((part) => part !== '');
  return `${model.primary}${fallbacks}${extra.length ? ` (${extra.join('; ')})` : ''}`;
}

async function list(db: Db): Promise<void> {
  for (const profile of await listProfiles(db)) {
    out(`${profile.profile.padEnd(20)} ${modelLine(profile.model)}; ${profile.bindings.length} binding(s)`);
  }
}

async function show(db: Db, name: string): Promise<void> {
  const row = await profileRecord(db, name);
  if (!row) throw new Refused(`no profile ${name}`);
  const documents = await profileDocuments(db, name);
  out(`profile ${row.id} (${row.display_name})${row.deleted_at === null ? '' : `, deleted ${row.deleted_at.toISOString()}: read-only`}`);
  out(`model: ${modelLine(await profileModelSettings(db, name))}`);
  out(`identity: ${row.identity === '' ? '(default)' : row.identity}`);
  out(`documents: ${documents.map((d) => d.name).join(', ') || '(none)'}`);
  const bindings = await bindingsOfProfile(db, name);
  out(`bindings: ${bindings.length === 0 ? '(none)' : bindings.map((b) => JSON.stringify(b.match)).join(', ')}`);
}

function checkedName(name: string | undefined): string {
  if (name === undefined) throw new Refused('a profile name is needed', 2);
  const parsed = profileNameSchema.safeParse(name);
  if (!parsed.success) throw new Refused(`name: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

async function create(db: Db, name: string | undefined, from: string | undefined): Promise<void> {
  const checked = checkedName(name);
  const outcome = await createProfile(db, checked, from, 'cli', COMPANIONS);
  if (outcome.kind === 'exists') throw new Refused(`a profile ${checked} exists (or existed: deleted names stay taken)`);
  if (outcome.kind === 'no_source') throw new Refused(`--from: no profile ${from ?? ''}`);
  out(from === undefined ? `created profile ${checked}` : `created profile ${checked} from ${from} (identity, documents, tools, hooks, skills, models; no memory or sessions)`);
}

async function remove(db: Db, name: string | undefined): Promise<void> {
  if (name === undefined) throw new Refused('a profile name is needed', 2);
  const outcome = await deleteProfile(db, name, 'cli', COMPANIONS);
  if (outcome.kind === 'main') throw new Refused('the profile main cannot be deleted: unbound traffic goes to it');
  if (outcome.kind === 'missing') throw new Refused(`no profile ${name}`);
  if (outcome.kind === 'bound') throw new Refused(`profile ${name} still has ${outcome.bindings.length} binding(s); remove them first (herald bindings remove)`);
  out(`deleted profile ${name}: it takes no new messages; its sessions and history stay readable`);
}

async function runAction(db: Db, action: string | undefined, name: string | undefined, from: string | undefined): Promise<void> {
  if (action === 'list' || action === undefined) return list(db);
  if (action === 'show') {
    if (name === undefined) throw new Refused('a profile name is needed', 2);
    if ((await profileState(db, name)) === 'missing') throw new Refused(`no profile ${name}`);
    return show(db, name);
  }
  if (action === 'create') return create(db, name, from);
  if (action === 'delete') return remove(db, name);
  throw new Refused(`unknown profiles action '${action}'`, 2);
}

/** `herald profiles list|show|create|delete`: straight on Postgres, through the same module as the API. */
export async function runProfilesCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { from: { type: 'string' } }, allowPositionals: true, strict: false });
  const from = typeof values.from === 'string' ? values.from : undefined;
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    await runAction(db, positionals[0], positionals[1], from);
    return 0;
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    process.stderr.write(`herald: ${error.message}\n${error.code === 2 ? `\n${PROFILES_USAGE}\n` : ''}`);
    return error.code;
  } finally {
    await db.destroy();
  }
}
