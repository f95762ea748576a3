import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { storableValue } from '@herald/core';
import type { Database, MessageRole, StoredToolCall } from '@herald/db';
import { tailOf } from './transcript-cache.ts';
import type { TranscriptCache, TranscriptTail } from './transcript-cache.ts';
import type { NewMessage, StoredMessage } from './stored-message.ts';

export type { NewMessage, StoredMessage } from './stored-message.ts';

/** Appends in order; callers hold the session lease (inside `fenced`), so seq cannot collide. */
export async function appendMessages(trx: Transaction<Database>, sessionId: string, turnId: string | null, messages: NewMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await sql`SELECT herald_append_messages(${sessionId}::uuid, ${turnId}::uuid, ${messagesJson(messages)}::jsonb)`.execute(trx);
}

// Not selectAll: the search columns (a tsvector per message) would be serialized on every turn.
// herald_transcript_state returns the same columns for the turn's read: a column added here goes there too.
export const MESSAGE_COLUMNS = ['id', 'seq', 'turn_id', 'role', 'content', 'tool_calls', 'tool_call_id', 'tool_name', 'created_at'] as const;

type Nullable<T> = { [K in keyof T]: T[K] | null };

export interface MessageRow {
  id: string;
  seq: number;
  turn_id: string | null;
  role: string;
  content: string;
  tool_calls: unknown;
  tool_call_id: string | null;
  tool_name: string | null;
  created_at: Date;
}

export function toStoredMessage(row: MessageRow): StoredMessage {
  return {
    id: String(row.id),
    seq: row.seq,
    turnId: row.turn_id,
    role: row.role as MessageRole,
    content: row.content,
    toolCalls: (row.tool_calls as StoredToolCall[] | null) ?? undefined,
    toolCallId: row.tool_call_id ?? undefined,
    toolName: row.tool_name ?? undefined,
    createdAt: row.created_at,
  };
}

/**
 * The whole transcript, oldest first. With a worker's `cache`, only the messages after what it
 * holds are read (loadTranscriptState says how that stays true); a transaction's read is never
 * cached, as it may hold rows that are rolled back.
 */
export async function loadTranscript(db: Kysely<Database> | Transaction<Database>, sessionId: string, cache?: TranscriptCache): Promise<StoredMessage[]> {
  if (cache !== undefined && !db.isTransaction) return (await loadTranscriptState(db, sessionId, cache)).messages;
  const rows = await db.selectFrom('messages').select(MESSAGE_COLUMNS).where('session_id', '=', sessionId).orderBy('seq').execute();
  return rows.map(toStoredMessage);
}

/** What the start of a turn weighs a session by, read with its transcript. */
export interface TranscriptState {
  messages: StoredMessage[];
  ineffectiveCompressions: number;
  parentSessionId: string | null;
  /**
   * The whole prompt of the session's last turn call as the provider counted it; null before any.
   * A review's or a compression's call sends another prompt (the transcript and an instruction, or
   * a summary request), so it says nothing of the size of the session's next request.
   */
  lastInputTokens: number | null;
}

type StateRow = Nullable<MessageRow> & { ineffective_compressions: number; parent_session_id: string | null; last_input_tokens: number | null; tail_found: boolean };

/**
 * The session row joined to its messages after `tail` (all of them without one), with whether the
 * message at the tail's seq still has the tail's id. Messages are only ever appended (seq is the
 * session's next, id a sequence never reused), so a tail that is still there vouches for every
 * message before it; one that is not (a copy of rows that were rolled back, a restored database)
 * sends the reader back to a full read. One statement, migrations/functions/herald_transcript_state.sql.
 */
async function readState(db: Kysely<Database>, sessionId: string, tail: TranscriptTail | undefined): Promise<StateRow[]> {
  const { rows } = await sql<StateRow>`SELECT * FROM herald_transcript_state(${sessionId}::uuid, ${tail?.seq ?? null}::integer, ${tail?.id ?? null}::bigint)`.execute(db);
  return rows;
}

/**
 * The transcript and the session's compression counters in one round trip (the start of every
 * turn needs both): the session row joined to its messages, so a session with no message yet still
 * answers with its counters. With a worker's `cache`, only the messages after the cached ones are
 * read and parsed (a second round trip only when the cached tail is gone).
 */
export async function loadTranscriptState(db: Kysely<Database>, sessionId: string, cache?: TranscriptCache): Promise<TranscriptState> {
  const cached = cache?.get(sessionId);
  let rows = await readState(db, sessionId, cached && tailOf(cached));
  const first = rows[0];
  if (!first) {
    cache?.delete(sessionId);
    throw new Error(`session ${sessionId} not found`);
  }
  let known = cached ?? [];
  if (!first.tail_found) {
    known = [];
    rows = await readState(db, sessionId, undefined);
  }
  const read = rows.flatMap((row) => (row.id === null ? [] : [toStoredMessage(row as MessageRow)]));
  const messages = known.length === 0 ? read : read.length === 0 ? known : [...known, ...read];
  if (cache !== undefined && !db.isTransaction) cache.set(sessionId, messages);
  const head = rows[0] ?? first;
  return {
    messages,
    ineffectiveCompressions: head.ineffective_compressions,
    parentSessionId: head.parent_session_id,
    lastInputTokens: head.last_input_tokens,
  };
}

/**
 * The shape the turn functions take a batch of messages in (one jsonb argument). What a model or a
 * tool wrote may hold NUL or unpaired surrogates, which Postgres refuses: they are dropped here, so
 * the step is stored once instead of failing the turn at every retry.
 */
export function messagesJson(messages: NewMessage[]): string {
  return storableJson(
    messages.map((message) => ({
      role: message.role,
      content: message.content,
      tool_calls: message.toolCalls && message.toolCalls.length > 0 ? (message.toolCalls satisfies StoredToolCall[]) : null,
      tool_call_id: message.toolCallId ?? null,
      tool_name: message.toolName ?? null,
      ...(message.owner === undefined ? {} : { owner: message.owner }),
    })),
  );
}

/** JSON text of a value with every string made storable (see messagesJson). */
export function storableJson(value: unknown): string {
  return JSON.stringify(storableValue(value));
}
