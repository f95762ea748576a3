import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import type { Db } from '@herald/db';
import { BINDING_FIELDS, bindingRuleSchema, matchOf, readBindings, replaceBindings } from '@herald/profiles';
import type { BindingRule } from '@herald/profiles';

export const BINDINGS_USAGE = `herald bindings list                          the bindings in order (the most specific match wins, else main)
herald bindings add PROFILE [--platform P] [--account A] [--chat-id C] [--guild-id G]
                    [--channel-id C] [--chat-type T] [--user-id U] [--at INDEX]
                                              route matching traffic to PROFILE (appended, or at INDEX)
herald bindings remove INDEX                  remove the binding at INDEX (as listed)`;

/** A refusal: one line naming what is wrong, exit 1 (2 for a malformed command line). */
class Refused extends Error {
  readonly code: number;
  constructor(message: string, code = 1) {
    super(message);
    this.code = code;
  }
}

const out = (text: string) => process.stdout.write(`${text}\n`);

/** `--chat-id` and `--chat_id` both name the field chat_id. */
const FLAGS = Object.fromEntries(
  BINDING_FIELDS.flatMap((field) => [
    [field, { type: 'string' as const }],
    [field.replace('_', '-'), { type: 'string' as const }],
  ]),
);

function ruleText(rule: BindingRule): string {
  const match = Object.entries(matchOf(rule))
    .map(([field, value]) => `${field}=${value}`)
    .join(' ');
  return `${match.padEnd(48)} -> ${rule.profile}`;
}

function describe(rule: BindingRule, index: number): string {
  return `${String(index).padStart(3)}  ${ruleText(rule)}`;
}

async function list(db: Db): Promise<void> {
  const rules = await readBindings(db);
  if (rules.length === 0) out('no bindings: all traffic goes to main');
  rules.forEach((rule, index) => out(describe(rule, index)));
}

function ruleFrom(profile: string | undefined, values: Record<string, unknown>): BindingRule {
  if (profile === undefined) throw new Refused('a profile is needed: herald bindings add PROFILE --platform ...', 2);
  const fields = Object.fromEntries(
    BINDING_FIELDS.flatMap((field) => {
      const value = values[field] ?? values[field.replace('_', '-')];
      return typeof value === 'string' ? [[field, value]] : [];
    }),
  );
  const parsed = bindingRuleSchema.safeParse({ ...fields, profile });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Refused(`${issue?.path.join('.') || 'binding'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

function indexArgument(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new Refused(`${flag}: expected a binding's index (herald bindings list)`, 2);
  return Number(text);
}

async function add(db: Db, profile: string | undefined, values: Record<string, unknown>): Promise<void> {
  const rule = ruleFrom(profile, values);
  const at = indexArgument(typeof values.at === 'string' ? values.at : undefined, '--at');
  const outcome = await replaceBindings(
    db,
    (current) => {
      const position = Math.min(at ?? current.length, current.length);
      return [...current.slice(0, position), rule, ...current.slice(position)];
    },
    'cli',
  );
  if (outcome.kind === 'missing_profile') throw new Refused(`profile: no profile ${outcome.profile} (herald profiles list)`);
  if (outcome.kind === 'refused') throw new Refused(outcome.message);
  const index = outcome.bindings.indexOf(rule);
  out(`added binding ${index}: ${ruleText(rule)}`);
}

async function remove(db: Db, text: string | undefined): Promise<void> {
  const index = indexArgument(text, 'INDEX');
  if (index === undefined) throw new Refused('the index of the binding to remove is needed (herald bindings list)', 2);
  let removed: BindingRule | undefined;
  const outcome = await replaceBindings(
    db,
    (current) => {
      removed = current[index];
      return removed === undefined ? `no binding ${index} (there are ${current.length})` : current.filter((_, position) => position !== index);
    },
    'cli',
  );
  if (outcome.kind === 'refused') throw new Refused(outcome.message);
  if (outcome.kind === 'missing_profile') throw new Refused(`binding ${outcome.index} names the profile ${outcome.profile}, which does not exist`);
  if (removed) out(`removed binding ${index}: ${ruleText(removed)}`);
}

async function runAction(db: Db, positionals: string[], values: Record<string, unknown>): Promise<void> {
  const [action, argument] = positionals;
  if (action === 'list' || action === undefined) return list(db);
  if (action === 'add') return add(db, argument ?? (typeof values.profile === 'string' ? values.profile : undefined), values);
  if (action === 'remove') return remove(db, argument);
  throw new Refused(`unknown bindings action '${action}'`, 2);
}

/** `herald bindings list|add|remove`: straight on Postgres, through the same module as GET/PUT /v1/bindings. */
export async function runBindingsCommand(argv: string[], config: Config): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...FLAGS, profile: { type: 'string' }, at: { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`herald: ${(error as Error).message}\n\n${BINDINGS_USAGE}\n`);
    return 2;
  }
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    await runAction(db, parsed.positionals, parsed.values);
    return 0;
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    process.stderr.write(`herald: ${error.message}\n${error.code === 2 ? `\n${BINDINGS_USAGE}\n` : ''}`);
    return error.code;
  } finally {
    await db.destroy();
  }
}
