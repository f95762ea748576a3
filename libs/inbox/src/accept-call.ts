import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, QueueMode } from '@herald/db';

/**
 * What herald_accept_message takes, by name. The chat's address is the route's; the limits are the
 * JSON limitsArgument builds, null for a caller nothing limits (a scheduled run).
 */
export interface AcceptCall {
  sessionKey: string;
  profileId: string;
  platform: string;
  chatType: string;
  chatId: string;
  threadId: string | null;
  userId: string;
  userName: string | null;
  text: string;
  dedupeKey: string | null;
  backlogLimit: number;
  operators: readonly string[];
  limits: string | null;
  /** Only into a session this user started (a person's API chat); another's is outcome 'not_owner'. */
  ownChat?: boolean;
}

export interface AcceptCallRow {
  event_id: string | null;
  session_id: string;
  outcome: 'accepted' | 'duplicate' | 'backlog_full' | 'limited' | 'not_owner';
  status: string | null;
  wake_generation: string;
  queue_mode: QueueMode;
  limit_name: string | null;
  retry_after: number | null;
}

/**
 * The one call of herald_accept_message (routing, session lock, dedupe, backlog, limits and the
 * insert in one round trip): the inbox's accept and a scheduled run's start both go through it, so
 * the function's sixteen positional arguments are spelled once.
 */
export async function callAcceptMessage(db: Kysely<Database> | Transaction<Database>, call: AcceptCall): Promise<AcceptCallRow | undefined> {
  const result = await sql<AcceptCallRow>`SELECT * FROM herald_accept_message(${randomUUID()}::uuid, ${randomUUID()}::uuid,
       ${call.sessionKey}, ${call.profileId}, ${call.platform}, ${call.chatType}, ${call.chatId}, ${call.threadId}::text,
       ${call.userId}, ${call.userName}::text, ${call.text}, ${call.dedupeKey}::text, ${call.backlogLimit}::integer,
       ${[...call.operators]}::text[], ${call.limits}::jsonb, ${call.ownChat === true}::boolean)`.execute(db);
  return result.rows[0];
}
