import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { MESSAGE_COLUMNS, toStoredMessage } from './transcript.ts';
import type { MessageRow, StoredMessage } from './transcript.ts';

/** Where a page of a transcript starts: the newest messages, or before/after a seq, or around a message id. */
export type PageAnchor = { kind: 'latest' } | { kind: 'before'; seq: number } | { kind: 'after'; seq: number } | { kind: 'around'; messageId: string };

export interface TranscriptPage {
  messages: StoredMessage[];
  /** True when older (smaller seq) or newer messages exist beyond this page. */
  hasBefore: boolean;
  hasAfter: boolean;
}

type Row = MessageRow;

/** Up to `limit` messages on one side of `seq`, each read through the (session_id, seq) unique index. */
async function side(db: Kysely<Database>, sessionId: string, direction: 'older' | 'newer', seq: number, limit: number): Promise<{ rows: Row[]; more: boolean }> {
  const rows = (await db
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('session_id', '=', sessionId)
    .where('seq', direction === 'older' ? '<' : '>', seq)
    .orderBy('seq', direction === 'older' ? 'desc' : 'asc')
    .limit(limit + 1)
    .execute()) as Row[];
  const more = rows.length > limit;
  const kept = rows.slice(0, limit);
  return { rows: direction === 'older' ? kept.reverse() : kept, more };
}

/**
 * One page of a session's transcript by keyset on seq, so a page of a 10,000-message session costs
 * the same as one of a short session. `around` centres the page on a message (a search hit);
 * undefined when that message is not in this session.
 */
export async function loadTranscriptPage(db: Kysely<Database>, sessionId: string, anchor: PageAnchor, limit: number): Promise<TranscriptPage | undefined> {
  if (anchor.kind === 'before' || anchor.kind === 'latest') {
    const older = await side(db, sessionId, 'older', anchor.kind === 'before' ? anchor.seq : 2 ** 31 - 1, limit);
    const last = older.rows.at(-1)?.seq;
    const newer = anchor.kind === 'latest' || last === undefined ? { rows: [], more: false } : await side(db, sessionId, 'newer', last, 0);
    return { messages: older.rows.map(toStoredMessage), hasBefore: older.more, hasAfter: newer.more };
  }
  if (anchor.kind === 'after') {
    const newer = await side(db, sessionId, 'newer', anchor.seq, limit);
    const first = newer.rows[0]?.seq;
    const older = first === undefined ? { rows: [], more: false } : await side(db, sessionId, 'older', first, 0);
    return { messages: newer.rows.map(toStoredMessage), hasBefore: older.more, hasAfter: newer.more };
  }
  if (!/^[0-9]{1,18}$/.test(anchor.messageId)) return undefined;
  const target = await db.selectFrom('messages').select(MESSAGE_COLUMNS).where('session_id', '=', sessionId).where('id', '=', anchor.messageId).executeTakeFirst();
  if (!target) return undefined;
  const half = Math.floor((limit - 1) / 2);
  const older = await side(db, sessionId, 'older', target.seq, half);
  const newer = await side(db, sessionId, 'newer', target.seq, limit - 1 - half);
  return { messages: [...older.rows, target as Row, ...newer.rows].map(toStoredMessage), hasBefore: older.more, hasAfter: newer.more };
}
