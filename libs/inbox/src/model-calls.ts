import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database, ModelCallKind } from '@herald/db';
import { storableJson } from '@herald/transcript';
import type { ModelCallRow } from './turn-store.ts';

/**
 * A model call made for a session outside its turn's own loop: a background review of a turn, or
 * the summary of a compression. `turnId`: the turn it was made for (the reviewed one, or the turn a
 * compression interrupted); its person pays, as for the turn's own calls. Without a turn (a
 * compression before the turn started), `userId` says whom it counts for.
 */
export interface SideModelCall {
  kind: Exclude<ModelCallKind, 'turn'>;
  sessionId: string;
  turnId: string | null;
  userId?: string | undefined;
  call: ModelCallRow;
}

/**
 * Stores a review's or a compression's call like a turn's (herald_record_model_call): priced,
 * counted for the person's daily tokens and money and the profile's money, so limits and budgets
 * see it. Not under a lease: the money was spent whether or not the work it was for is kept.
 */
export async function recordModelCall(db: Kysely<Database>, side: SideModelCall): Promise<void> {
  const owner = side.turnId === null || side.userId !== undefined ? { user_id: side.userId ?? null } : {};
  const call = storableJson({ ...side.call, ...owner, kind: side.kind });
  await sql`SELECT herald_record_model_call(${side.sessionId}::uuid, ${side.turnId}::uuid, ${call}::jsonb)`.execute(db);
}
