import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, QueueMode } from '@herald/db';

export interface PendingEvent {
  id: string;
  text: string;
  userId: string;
  userName: string | null;
  status: 'pending' | 'processing';
  turnId: string | null;
}

export interface Inbox {
  queueMode: QueueMode;
  events: PendingEvent[];
}

/** An inbox read at the end of a turn: `released` when the read let the lease go (nothing left). */
export interface NextInbox extends Inbox {
  released: boolean;
}

/** One row of herald_open_inbox (and of herald_finish_turn_next). */
export interface InboxEntry {
  queue_mode: QueueMode;
  parked: boolean;
  id: string | null;
  text: string | null;
  user_id: string | null;
  user_name: string | null;
  status: string | null;
  turn_id: string | null;
  released: boolean;
}

export const INBOX_LIMIT = 100;

export function inboxOf(rows: InboxEntry[]): NextInbox {
  const events: PendingEvent[] = [];
  for (const row of rows) {
    if (row.id === null || row.text === null || row.user_id === null) continue;
    events.push({
      id: row.id,
      text: row.text,
      userId: row.user_id,
      userName: row.user_name,
      status: row.status as PendingEvent['status'],
      turnId: row.turn_id,
    });
  }
  return { queueMode: rows[0]?.queue_mode ?? 'followup', events, released: rows[0]?.released === true };
}

/** The session's queue mode and open events, in one round trip (herald_open_inbox). */
export async function openInbox(db: Kysely<Database> | Transaction<Database>, sessionId: string, limit = INBOX_LIMIT): Promise<Inbox> {
  const { rows } = await sql<InboxEntry>`SELECT * FROM herald_open_inbox(${sessionId}::uuid, NULL, ${limit}::integer)`.execute(db);
  const { queueMode, events } = inboxOf(rows);
  return { queueMode, events };
}
