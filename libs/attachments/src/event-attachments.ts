import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import type { Attachment } from './attachment.ts';

/** Links a message to its files, in the transaction that commits the message (libs/session inbox.ts). */
export async function attachToEvent(trx: Transaction<Database> | Kysely<Database>, eventId: string, attachments: readonly Attachment[]): Promise<void> {
  if (attachments.length === 0) return;
  await trx
    .insertInto('event_attachments')
    .values(
      attachments.map((a, position) => ({
        event_id: eventId,
        position,
        sha256: a.sha256,
        name: a.name,
        path: a.path,
        mime: a.mime,
        kind: a.kind,
        size_bytes: String(a.size),
      })),
    )
    .onConflict((oc) => oc.columns(['event_id', 'position']).doNothing())
    .execute();
}

/** The files of these messages, by message, in the order they came. */
export async function eventAttachments(db: Kysely<Database>, eventIds: readonly string[]): Promise<Map<string, Attachment[]>> {
  const byEvent = new Map<string, Attachment[]>();
  if (eventIds.length === 0) return byEvent;
  const rows = await db
    .selectFrom('event_attachments')
    .selectAll()
    .where('event_id', 'in', [...eventIds])
    .orderBy('event_id')
    .orderBy('position')
    .execute();
  for (const row of rows) {
    const list = byEvent.get(row.event_id) ?? [];
    list.push({ sha256: row.sha256, name: row.name, path: row.path, mime: row.mime, kind: row.kind, size: Number(row.size_bytes) });
    byEvent.set(row.event_id, list);
  }
  return byEvent;
}

/** The file's name and type if the session's messages or deliveries carry those bytes; undefined otherwise. */
export async function sessionFile(db: Kysely<Database>, sessionId: string, sha256: string): Promise<{ name: string; mime: string } | undefined> {
  const rows = await sql<{ name: string; mime: string }>`
    SELECT a.name, a.mime FROM event_attachments a JOIN inbound_events e ON e.id = a.event_id
      WHERE e.session_id = ${sessionId}::uuid AND a.sha256 = ${sha256}
    UNION ALL
    SELECT o.file ->> 'name', o.file ->> 'mime' FROM outbox o
      WHERE o.session_id = ${sessionId}::uuid AND o.file ->> 'sha256' = ${sha256}
    LIMIT 1`.execute(db);
  return rows.rows[0];
}

/** A transcript message, as far as finding its files needs: a user message is the text of one of its turn's events. */
export interface TranscriptEntry {
  id: string;
  role: string;
  turnId: string | null;
  content: string;
}

/**
 * The files each user message of a transcript carried, by message id (messages without files are
 * not in the map). A turn's user messages are its events' texts in order (herald_start_turn), so a
 * message is matched to the first event of its turn, in this session, with the same text that no
 * earlier message took; only files of this session's events, as GET .../attachments/:sha256 serves.
 */
export async function messageAttachments(db: Kysely<Database>, sessionId: string, messages: readonly TranscriptEntry[]): Promise<Map<string, Attachment[]>> {
  const byMessage = new Map<string, Attachment[]>();
  const turnIds = [...new Set(messages.filter((m) => m.role === 'user' && m.turnId !== null).map((m) => m.turnId as string))];
  if (turnIds.length === 0) return byMessage;
  const events = await db
    .selectFrom('inbound_events')
    .select(['id', 'turn_id', 'text'])
    .where('session_id', '=', sessionId)
    // One array parameter however long the transcript (an IN list would bind one per turn).
    .where(sql<boolean>`turn_id = ANY(${turnIds}::uuid[])`)
    .where((eb) => eb.exists(eb.selectFrom('event_attachments').select('event_id').whereRef('event_attachments.event_id', '=', 'inbound_events.id')))
    .orderBy('received_at')
    .orderBy('id')
    .execute();
  if (events.length === 0) return byMessage;
  const files = await eventAttachments(
    db,
    events.map((event) => event.id),
  );
  const taken = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const event = events.find((candidate) => !taken.has(candidate.id) && candidate.turn_id === message.turnId && candidate.text === message.content);
    if (event === undefined) continue;
    taken.add(event.id);
    byMessage.set(message.id, files.get(event.id) ?? []);
  }
  return byMessage;
}
