import { isChatPlatform } from '@herald/core';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { CompressionTrigger, Database } from '@herald/db';
import { enqueueOutbound } from '@herald/delivery';
import { fenced } from '@herald/leases';
import type { Lease } from '@herald/leases';
import { endSession } from '@herald/session';
import { appendMessages } from '@herald/transcript';
import type { NewMessage } from '@herald/transcript';

// Compression as a session lifecycle event (docs/long-chats.md): the old session ends, a child
// carries on with a fresh prompt and the compacted history, and the chat's route, its open events
// and turns, pending approvals and the todo list move to the child, all in one transaction under
// the old session's lease. A crash before the commit leaves the old session as it was.

/** The notices about compression a person is given, each once per lineage. */
export type CompressionNotice = 'unavailable' | 'thrashing';

/**
 * Takes the session's compression claim for this lease. One claim per session: a holder with a
 * newer lease token (the one before it died or stalled) takes it over; a session already
 * compressed, or ended, cannot be claimed again.
 */
export async function claimCompression(db: Kysely<Database>, lease: Lease, trigger: CompressionTrigger): Promise<boolean> {
  return fenced(db, lease, async (trx) => {
    const session = await trx.selectFrom('sessions').select('ended_at').where('id', '=', lease.sessionId).executeTakeFirst();
    if (!session || session.ended_at !== null) return false;
    const claimed = await sql<{ session_id: string }>`
      INSERT INTO session_compressions (session_id, owner, lease_token, trigger)
      VALUES (${lease.sessionId}::uuid, ${lease.owner}, ${lease.token}::bigint, ${trigger})
      ON CONFLICT (session_id) DO UPDATE
        SET owner = EXCLUDED.owner, lease_token = EXCLUDED.lease_token, trigger = EXCLUDED.trigger, status = 'running',
            started_at = clock_timestamp(), finished_at = NULL, error = NULL
        WHERE session_compressions.status <> 'done' AND session_compressions.lease_token <= EXCLUDED.lease_token
      RETURNING session_id`.execute(trx);
    return claimed.rows.length === 1;
  });
}

export interface CompactionCommit {
  trigger: CompressionTrigger;
  /** Built fresh for the child, so memory written since the parent's prompt is in it. */
  systemPrompt: string;
  messages: NewMessage[];
  /** The child is still over the threshold: counted towards anti-thrash. */
  ineffective: boolean;
  stats: { messagesBefore: number; tokensBefore: number; tokensAfter: number; summarised: number; fallback: boolean };
  /** A /compress command answered in the same transaction (it stays with the old session). */
  answer?: { eventId: string; text: string } | undefined;
}

/** "name #2" after "name", "name #3" after "name #2". */
export function childTitle(parentTitle: string | null, chatId: string): string {
  const title = parentTitle ?? `chat ${chatId}`;
  const numbered = / #(\d+)$/.exec(title);
  return numbered ? `${title.slice(0, numbered.index)} #${Number(numbered[1]) + 1}` : `${title} #2`;
}

/** Commits the child; undefined when the claim is no longer ours or the session already ended. */
export async function commitCompaction(db: Kysely<Database>, lease: Lease, commit: CompactionCommit): Promise<string | undefined> {
  return fenced(db, lease, async (trx) => {
    const parentId = lease.sessionId;
    // The same row lock herald_accept_message takes: a message arriving now waits, then re-routes.
    const parent = await trx.selectFrom('sessions').selectAll().where('id', '=', parentId).forUpdate().executeTakeFirst();
    if (!parent || parent.ended_at !== null) return undefined;
    const claim = await trx
      .selectFrom('session_compressions')
      .select('session_id')
      .where('session_id', '=', parentId)
      .where('lease_token', '=', lease.token)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (!claim) return undefined;
    const childId = randomUUID();
    await trx
      .insertInto('sessions')
      .values({
        id: childId,
        profile_id: parent.profile_id,
        session_key: parent.session_key,
        platform: parent.platform,
        chat_type: parent.chat_type,
        chat_id: parent.chat_id,
        thread_id: parent.thread_id,
        origin_user_id: parent.origin_user_id,
        system_prompt: commit.systemPrompt,
        queue_mode: parent.queue_mode,
        parent_session_id: parentId,
        title: childTitle(parent.title, parent.chat_id),
        ineffective_compressions: commit.ineffective ? parent.ineffective_compressions + 1 : 0,
        compression_notices: sql<string[]>`${parent.compression_notices}::text[]`,
      })
      .execute();
    await appendMessages(trx, childId, null, commit.messages);
    if (commit.answer) await answerEvent(trx, commit.answer.eventId, commit.answer.text);
    await moveOpenWork(trx, parentId, childId);
    await trx.updateTable('session_routes').set({ session_id: childId, updated_at: new Date() }).where('session_id', '=', parentId).execute();
    await endSession(trx, parentId, 'compression');
    const { stats } = commit;
    await trx
      .updateTable('session_compressions')
      .set({
        status: 'done',
        child_session_id: childId,
        messages_before: stats.messagesBefore,
        messages_after: commit.messages.length,
        tokens_before: stats.tokensBefore,
        tokens_after: stats.tokensAfter,
        summarised: stats.summarised,
        fallback: stats.fallback,
        finished_at: new Date(),
      })
      .where('session_id', '=', parentId)
      .execute();
    return childId;
  });
}

/** Open events, unfinished turns with their waits, the todo list and session approvals go to the child. */
async function moveOpenWork(trx: Transaction<Database>, parentId: string, childId: string): Promise<void> {
  const turns = await trx.updateTable('turns').set({ session_id: childId }).where('session_id', '=', parentId).where('status', 'in', ['running', 'waiting']).returning('id').execute();
  if (turns.length > 0) {
    await trx
      .updateTable('tool_waits')
      .set({ session_id: childId })
      .where(
        'turn_id',
        'in',
        turns.map((turn) => turn.id),
      )
      .execute();
  }
  await trx.updateTable('inbound_events').set({ session_id: childId }).where('session_id', '=', parentId).where('status', 'in', ['pending', 'processing']).execute();
  await sql`INSERT INTO session_todos (session_id, items, revision)
    SELECT ${childId}::uuid, items, revision FROM session_todos WHERE session_id = ${parentId}::uuid`.execute(trx);
  await sql`INSERT INTO session_approvals (session_id, pattern_key, approved_by)
    SELECT ${childId}::uuid, pattern_key, approved_by FROM session_approvals WHERE session_id = ${parentId}::uuid`.execute(trx);
}

/** Ends a command event the worker ran (/compress) with its reply, through the outbox for chats. */
async function answerEvent(trx: Transaction<Database>, eventId: string, text: string): Promise<void> {
  const event = await trx
    .updateTable('inbound_events')
    .set({ status: 'done', reply_text: text, completed_at: new Date() })
    .where('id', '=', eventId)
    .returning(['session_id', 'platform', 'platform_message_id'])
    .executeTakeFirst();
  if (!event || !isChatPlatform(event.platform)) return;
  const session = await trx.selectFrom('sessions').select(['chat_id', 'chat_type', 'thread_id']).where('id', '=', event.session_id).executeTakeFirstOrThrow();
  await enqueueOutbound(trx, {
    idempotencyKey: `command:${eventId}`,
    platform: event.platform,
    target: {
      chatId: session.chat_id,
      chatType: session.chat_type,
      ...(session.thread_id === null ? {} : { threadId: session.thread_id }),
      ...(event.platform_message_id === null ? {} : { replyTo: event.platform_message_id }),
    },
    text,
    sessionId: event.session_id,
    source: 'command',
  });
  await sql`SELECT pg_notify('herald_outbox', ${event.session_id})`.execute(trx);
}

/** A command event answered without a compression (nothing to compact, summariser unavailable). */
export async function answerCommand(db: Kysely<Database>, lease: Lease, eventId: string, text: string): Promise<void> {
  await fenced(db, lease, (trx) => answerEvent(trx, eventId, text));
}

/** A compression that changed nothing: the claim is let go; `ineffective` counts towards anti-thrash. */
export async function recordCompressionUnchanged(db: Kysely<Database>, lease: Lease, error: string, ineffective: boolean): Promise<void> {
  await fenced(db, lease, async (trx) => {
    await trx
      .updateTable('session_compressions')
      .set({ status: 'unchanged', error, finished_at: new Date() })
      .where('session_id', '=', lease.sessionId)
      .where('lease_token', '=', lease.token)
      .execute();
    if (ineffective) {
      await trx
        .updateTable('sessions')
        .set((eb) => ({ ineffective_compressions: eb('ineffective_compressions', '+', 1) }))
        .where('id', '=', lease.sessionId)
        .execute();
    }
  });
}

/** True the first time a notice is taken for this lineage; false when the person was told already. */
export async function takeNotice(db: Kysely<Database>, lease: Lease, notice: CompressionNotice): Promise<boolean> {
  return fenced(db, lease, async (trx) => {
    const updated = await sql<{ id: string }>`
      UPDATE sessions SET compression_notices = array_append(compression_notices, ${notice})
      WHERE id = ${lease.sessionId}::uuid AND NOT (${notice} = ANY (compression_notices)) RETURNING id`.execute(trx);
    return updated.rows.length === 1;
  });
}

export interface LineageEntry {
  sessionId: string;
  title: string | null;
  parentSessionId: string | null;
  endReason: string | null;
  endedAt: Date | null;
  createdAt: Date;
}

/** The whole chain a session belongs to, oldest first: its ancestors, itself, and its descendants. */
export async function sessionLineage(db: Kysely<Database>, sessionId: string): Promise<LineageEntry[]> {
  const rows = await sql<{ id: string; title: string | null; parent_session_id: string | null; end_reason: string | null; ended_at: Date | null; created_at: Date }>`
    WITH RECURSIVE up(id, parent, depth) AS (
      SELECT id, parent_session_id, 0 FROM sessions WHERE id = ${sessionId}::uuid
      UNION ALL
      SELECT s.id, s.parent_session_id, u.depth + 1 FROM sessions s JOIN up u ON s.id = u.parent WHERE u.depth < 1000
    ), down(id, depth) AS (
      SELECT id, 0 FROM up WHERE parent IS NULL OR depth = (SELECT max(depth) FROM up)
      UNION ALL
      SELECT s.id, d.depth + 1 FROM sessions s JOIN down d ON s.parent_session_id = d.id WHERE d.depth < 1000
    )
    SELECT DISTINCT s.id, s.title, s.parent_session_id, s.end_reason, s.ended_at, s.created_at
    FROM sessions s WHERE s.id IN (SELECT id FROM down)
    ORDER BY s.created_at, s.id`.execute(db);
  return rows.rows.map((row) => ({
    sessionId: row.id,
    title: row.title,
    parentSessionId: row.parent_session_id,
    endReason: row.end_reason,
    endedAt: row.ended_at,
    createdAt: row.created_at,
  }));
}
