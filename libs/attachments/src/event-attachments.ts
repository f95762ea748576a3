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
