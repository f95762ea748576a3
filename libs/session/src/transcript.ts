import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { storableValue } from '@herald/core';
import type { Database, MessageRole, StoredToolCall } from '@herald/db';

export interface NewMessage {
  role: MessageRole;
  content: string;
  toolCalls?: StoredToolCall[] | undefined;
  toolCallId?: string | undefined;
  toolName?: string | undefined;
  /** Who wrote it (a user message's author); unset: the person the turn answers (herald_append_messages). */
  owner?: string | undefined;
}

export interface StoredMessage extends NewMessage {
  id: string;
  seq: number;
  turnId: string | null;
  createdAt: Date;
}

/** Appends in order; callers hold the session lease (inside `fenced`), so seq cannot collide. */
export async function appendMessages(
  trx: Transaction<Database>,
  sessionId: string,
  turnId: string | null,
  messages: NewMessage[],
): Promise<void> {
  if (messages.length === 0) return;
  await sql`SELECT herald_append_messages(${sessionId}::uuid, ${turnId}::uuid, ${messagesJson(messages)}::jsonb)`.execute(trx);
}

// Not selectAll: the search columns (a tsvector per message) would be serialized on every turn.
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

export async function loadTranscript(
  db: Kysely<Database> | Transaction<Database>,
  sessionId: string,
): Promise<StoredMessage[]> {
  const rows = await db.selectFrom('messages').select(MESSAGE_COLUMNS).where('session_id', '=', sessionId).orderBy('seq').execute();
  return rows.map(toStoredMessage);
}

/** What the start of a turn weighs a session by, read with its transcript. */
export interface TranscriptState {
  messages: StoredMessage[];
  ineffectiveCompressions: number;
  parentSessionId: string | null;
  /** The whole prompt of the session's last model call as the provider counted it; null before any. */
  lastInputTokens: number | null;
}

/**
 * The transcript and the session's compression counters in one round trip (the start of every
 * turn needs both): the session row joined to its messages, so a session with no message yet still
 * answers with its counters.
 */
export async function loadTranscriptState(db: Kysely<Database>, sessionId: string): Promise<TranscriptState> {
  // The last call's size in a LATERAL on the one session row: a sub-select in the select list
  // would run once per message.
  const { rows } = await sql<Nullable<MessageRow> & { ineffective_compressions: number; parent_session_id: string | null; last_input_tokens: number | null }>`
    SELECT ${sql.join(MESSAGE_COLUMNS.map((column) => sql.ref(`m.${column}`)))},
           s.ineffective_compressions, s.parent_session_id, c.input_tokens AS last_input_tokens
    FROM sessions s
    LEFT JOIN LATERAL (SELECT input_tokens FROM model_calls WHERE session_id = s.id ORDER BY id DESC LIMIT 1) c ON true
    LEFT JOIN messages m ON m.session_id = s.id
    WHERE s.id = ${sessionId}
    ORDER BY m.seq`.execute(db);
  const first = rows[0];
  if (!first) throw new Error(`session ${sessionId} not found`);
  const messages = rows.flatMap((row) => (row.id === null ? [] : [toStoredMessage(row as MessageRow)]));
  return {
    messages,
    ineffectiveCompressions: first.ineffective_compressions,
    parentSessionId: first.parent_session_id,
    lastInputTokens: first.last_input_tokens,
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
