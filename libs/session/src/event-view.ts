/** What the API shows of one accepted event: its status, reply, and the question or approval its turn waits on. */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database, WaitKind } from '@herald/db';

export interface EventWaiting {
  id: string;
  kind: WaitKind;
  tool: string;
  prompt: string;
  choices: string[] | null;
  expiresAt: Date;
}

export interface EventView {
  id: string;
  sessionId: string;
  status: string;
  replyText: string | null;
  error: string | null;
  /**
   * Its turn ended failed (the model could not be reached, the attempts were spent, a budget was
   * spent...): the event is `done` with the turn's apology as its reply, and a follower is told it
   * failed. A turn the person ended with /stop is stored failed too, but they asked for that end.
   */
  turnFailed: boolean;
  /** Set while the event's turn is parked on a question or an approval for the person. */
  waiting: EventWaiting | null;
  /** The 80% budget warnings the event's turn gave the person (each budget warns once a period). */
  budgetWarnings: string[];
}

interface EventRow {
  id: string;
  session_id: string;
  status: string;
  reply_text: string | null;
  error: string | null;
  wait_id: string | null;
  kind: WaitKind | null;
  tool_name: string | null;
  prompt: string | null;
  choices: string[] | null;
  expires_at: Date | null;
  budget_warnings: string[] | null;
  turn_failed: boolean;
}

/** One statement, migrations/functions/herald_event_view.sql (the ingress reads it for every answer it waits on). */
export async function getEvent(db: Kysely<Database>, eventId: string): Promise<EventView | undefined> {
  const row = (await sql<EventRow>`SELECT * FROM herald_event_view(${eventId}::uuid)`.execute(db)).rows[0];
  if (!row) return undefined;
  const waiting =
    row.wait_id !== null && row.kind !== null && row.tool_name !== null && row.prompt !== null && row.expires_at !== null
      ? { id: row.wait_id, kind: row.kind, tool: row.tool_name, prompt: row.prompt, choices: row.choices ?? null, expiresAt: row.expires_at }
      : null;
  return { id: row.id, sessionId: row.session_id, status: row.status, replyText: row.reply_text, error: row.error, turnFailed: row.turn_failed, waiting, budgetWarnings: row.budget_warnings ?? [] };
}

/**
 * Tokens the models spent on an event's turn (every call of its own loop), for an API answer's
 * usage: a background review of the turn comes after the answer and is not part of it (GET
 * /v1/usage counts it).
 */
export async function eventUsage(db: Kysely<Database>, eventId: string): Promise<{ inputTokens: number; outputTokens: number }> {
  const row = await db
    .selectFrom('inbound_events as e')
    .innerJoin('model_calls as m', (join) => join.onRef('m.session_id', '=', 'e.session_id').onRef('m.turn_id', '=', 'e.turn_id'))
    .select((eb) => [eb.fn.sum<string>('m.input_tokens').as('input'), eb.fn.sum<string>('m.output_tokens').as('output')])
    .where('e.id', '=', eventId)
    .where('m.kind', '=', 'turn')
    .executeTakeFirst();
  return { inputTokens: Number(row?.input ?? 0), outputTokens: Number(row?.output ?? 0) };
}

/** An accepted event whose turn has not ended: what a follower of the session can stream. */
export interface OpenEvent {
  id: string;
  status: string;
  receivedAt: Date;
}

/**
 * A session's events still pending or running, oldest first (a turn's stream is kept under each of
 * its events); undefined when there is no such session.
 */
export async function listOpenEvents(db: Kysely<Database>, sessionId: string): Promise<OpenEvent[] | undefined> {
  const session = await db.selectFrom('sessions').select('id').where('id', '=', sessionId).executeTakeFirst();
  if (!session) return undefined;
  const rows = await db
    .selectFrom('inbound_events')
    .select(['id', 'status', 'received_at'])
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['pending', 'processing'])
    .orderBy('received_at')
    .orderBy('id')
    .limit(20)
    .execute();
  return rows.map((row) => ({ id: row.id, status: row.status, receivedAt: row.received_at }));
}
