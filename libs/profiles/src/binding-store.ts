import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database, ProfileCache } from '@herald/db';
import { withAudit } from '@herald/audit';
import { BINDING_FIELDS, profileFor } from './binding-rules.ts';
import type { BindingFacts, BindingRule } from './binding-rules.ts';

// The bindings table (migrations/0069_bindings.sql) is this module's alone: the API, the CLI and
// every ingress read and replace the list through it.

type Db = Kysely<Database>;

/** The list in order, as PUT /v1/bindings took it. */
export async function readBindings(db: Db): Promise<BindingRule[]> {
  const rows = await db.selectFrom('bindings').selectAll().orderBy('position').execute();
  return rows.map((row) => {
    const rule: Record<string, string> = {};
    for (const field of BINDING_FIELDS) {
      const stored = row[field];
      if (stored !== null) rule[field] = stored;
    }
    return { ...rule, profile: row.profile_id } as BindingRule;
  });
}

export type ReplaceOutcome = { kind: 'replaced'; bindings: BindingRule[] } | { kind: 'missing_profile'; index: number; profile: string } | { kind: 'refused'; message: string };

/** A change of the list: the new list from the current one, or a refusal's message. */
export type BindingsEdit = readonly BindingRule[] | ((current: BindingRule[]) => BindingRule[] | string);

/**
 * Replaces the whole list in one transaction (with its audit entry); `edit` may compute it from
 * the current list (`herald bindings add|remove`), read under a lock so two edits at once both
 * land. A rule naming a profile that does not take messages refuses the change and names the
 * rule's index; nothing is written then. The table's trigger tells every ingress when it commits.
 */
export async function replaceBindings(db: Db, edit: BindingsEdit, actor: string): Promise<ReplaceOutcome> {
  return withAudit<ReplaceOutcome>(db, async (trx) => {
    await sql`LOCK TABLE bindings IN SHARE ROW EXCLUSIVE MODE`.execute(trx);
    const next = typeof edit === 'function' ? edit(await readBindings(trx)) : edit;
    if (typeof next === 'string') return { result: { kind: 'refused' as const, message: next }, audit: [] };
    const rules = [...next];
    // The profiles named are locked against a concurrent delete until the list is committed.
    const names = [...new Set(rules.map((rule) => rule.profile))];
    const active =
      names.length === 0
        ? new Set<string>()
        : new Set((await trx.selectFrom('profiles').select('id').where('id', 'in', names).where('deleted_at', 'is', null).forShare().execute()).map((row) => row.id));
    const missing = rules.findIndex((rule) => !active.has(rule.profile));
    if (missing >= 0) return { result: { kind: 'missing_profile' as const, index: missing, profile: rules[missing]?.profile ?? '' }, audit: [] };
    await trx.deleteFrom('bindings').execute();
    if (rules.length > 0) {
      await trx
        .insertInto('bindings')
        .values(rules.map((rule, position) => ({ position, profile_id: rule.profile, ...Object.fromEntries(BINDING_FIELDS.map((field) => [field, rule[field] ?? null])) })))
        .execute();
    }
    return { result: { kind: 'replaced' as const, bindings: rules }, audit: { kind: 'admin_change' as const, actor, profileId: null, subject: 'bindings', detail: { bindings: rules } } };
  });
}

/**
 * The profile an inbound message goes to, from the list as this process caches it (dropped on
 * every change's NOTIFY, so a change reaches every ingress without a restart).
 */
export async function routeProfile(db: Db, facts: BindingFacts, cache?: ProfileCache): Promise<string> {
  const rules = cache === undefined ? await readBindings(db) : await cache.shared('bindings', () => readBindings(db));
  return profileFor(rules, facts);
}
