import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, StoredToolCall } from '@herald/db';

// What a delegate_task child's result is made of: its answer, its model usage and its tool calls.

type Executor = Kysely<Database> | Transaction<Database>;

/** A session's own conversation calls (kind 'turn': its reviews and summaries count in GET /v1/usage, not here): how many, their tokens, and the model of the last one. */
export async function sessionModelUsage(db: Executor, sessionId: string): Promise<{ calls: number; input: number; output: number; model: string | null }> {
  const row = await sql<{ calls: string; input: string | null; output: string | null; model: string | null }>`
    SELECT count(*) AS calls, sum(input_tokens) AS input, sum(output_tokens) AS output,
           -- The session's index order, not id alone (decisions/2026-12-06-last-turn-call.md).
           (SELECT m.model FROM model_calls m WHERE m.session_id = ${sessionId}::uuid AND m.kind = 'turn' ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS model
    FROM model_calls WHERE session_id = ${sessionId}::uuid AND kind = 'turn'`.execute(db);
  const usage = row.rows[0];
  return { calls: Number(usage?.calls ?? 0), input: Number(usage?.input ?? 0), output: Number(usage?.output ?? 0), model: usage?.model ?? null };
}

/** A session's assistant and tool messages in order: the calls it made and their results. */
export async function toolExchanges(
  db: Executor,
  sessionId: string,
): Promise<{ role: string; content: string; tool_calls: StoredToolCall[] | null; tool_call_id: string | null; tool_name: string | null }[]> {
  return db
    .selectFrom('messages')
    .select(['role', 'content', 'tool_calls', 'tool_call_id', 'tool_name'])
    .where('session_id', '=', sessionId)
    .where('role', 'in', ['assistant', 'tool'])
    .orderBy('seq')
    .execute();
}

/** The reply to a session's first event (a child session's one task); null before it has one. */
export async function firstReply(db: Executor, sessionId: string): Promise<string | null> {
  const event = await db.selectFrom('inbound_events').select('reply_text').where('session_id', '=', sessionId).orderBy('received_at').executeTakeFirst();
  return event?.reply_text ?? null;
}
