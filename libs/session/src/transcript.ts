import type { Kysely, Transaction } from 'kysely';
import type { Database, MessageRole, StoredToolCall } from './schema.ts';

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
  const last = await trx
    .selectFrom('messages')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  let seq = Number(last?.seq ?? 0);
  await trx
    .insertInto('messages')
    .values(
      messages.map((message) => ({
        session_id: sessionId,
        seq: ++seq,
        turn_id: turnId,
        role: message.role,
        content: message.content,
        tool_calls: message.toolCalls && message.toolCalls.length > 0 ? JSON.stringify(message.toolCalls) : null,
        tool_call_id: message.toolCallId ?? null,
        tool_name: message.toolName ?? null,
      })),
    )
    .execute();
}

export async function loadTranscript(
  db: Kysely<Database> | Transaction<Database>,
  sessionId: string,
): Promise<StoredMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({
    id: String(row.id),
    seq: row.seq,
    turnId: row.turn_id,
    role: row.role,
    content: row.content,
    toolCalls: (row.tool_calls as StoredToolCall[] | null) ?? undefined,
    toolCallId: row.tool_call_id ?? undefined,
    toolName: row.tool_name ?? undefined,
    createdAt: row.created_at,
  }));
}
