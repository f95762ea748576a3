import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import type { Directive } from './directives.ts';
import type { HookEvent } from './hook-spec.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * Whether turn `turnId` already fired `event` for `key` (a tool call id, or '' for the turn), and
 * the directive it stored: a resumed turn reads it back instead of firing again.
 */
export async function hookFiring(db: Executor, turnId: string, key: string, event: HookEvent): Promise<{ directive: Directive | null } | undefined> {
  const row = await db.selectFrom('hook_firings').select('directive').where('turn_id', '=', turnId).where('tool_call_id', '=', key).where('event', '=', event).executeTakeFirst();
  return row === undefined ? undefined : { directive: (row.directive as Directive | null) ?? null };
}

/**
 * Records that turn `turnId` fired `event` for `key`, with the directive it gave when it gives one
 * (pre_tool_call; its null is stored as JSON null), in the caller's transaction under the lease. A
 * second record of the same firing is ignored.
 */
export async function recordHookFiring(trx: Executor, turnId: string, key: string, event: HookEvent, directive?: Directive | null): Promise<void> {
  await trx
    .insertInto('hook_firings')
    .values({ turn_id: turnId, tool_call_id: key, event, directive: directive === undefined ? null : JSON.stringify(directive) })
    .onConflict((conflict) => conflict.doNothing())
    .execute();
}
