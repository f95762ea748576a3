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
    })),
  );
}

/** JSON text of a value with every string made storable (see messagesJson). */
export function storableJson(value: unknown): string {
  return JSON.stringify(storableValue(value));
}
