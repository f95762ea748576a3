import { sql } from 'kysely';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, ModelCallsTable, WaitKind } from '@herald/db';
import { CHAT_PLATFORMS, storable } from '@herald/core';
import { currentTraceParent, recordFencingRejection } from '@herald/telemetry';
import { LeaseLostError, INBOX_LIMIT, inboxOf } from '@herald/leases';
import type { Lease, InboxEntry, NextInbox } from '@herald/leases';
import { messagesJson, storableJson } from '@herald/transcript';
import { auditRowsJson } from '@herald/audit';
import type { AuditEntry } from '@herald/audit';
import type { NewMessage } from '@herald/transcript';

/** The usage of one model call, as stored in model_calls (whom it counts for and its profile: herald_record_model_call). */
export type ModelCallRow = Omit<Insertable<ModelCallsTable>, 'id' | 'session_id' | 'turn_id' | 'created_at' | 'user_id' | 'profile_id'>;

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * Where a turn's reply and a wait's notice go into the outbox: the registry's chat platforms, given
 * to the SQL functions as data (they name no platform). The chat is read from the session row when
 * the turn ends, not here, because a handoff during the turn moves its answer to the home chat.
 */
const CHAT_REPLY_PLATFORMS: string[] = [...CHAT_PLATFORMS];

/** The turn functions raise HL001 when the lease is gone; callers see LeaseLostError. */
async function call(db: Executor, lease: Lease, query: ReturnType<typeof sql>): Promise<unknown[]> {
  try {
    return (await query.execute(db)).rows;
  } catch (error) {
    if ((error as { code?: string }).code === 'HL001') {
      recordFencingRejection();
      throw new LeaseLostError(lease.sessionId);
    }
    throw error;
  }
}

/** One round trip: turn row, user messages, events taken, and the session's prompt on its first turn. */
export async function startTurn(db: Executor, lease: Lease, turnId: string, eventIds: string[], systemPrompt: string | null): Promise<void> {
  await call(
    db,
    lease,
    sql`SELECT herald_start_turn(${lease.sessionId}::uuid, ${lease.token}::bigint, ${turnId}::uuid, ${lease.owner},
          ${eventIds}::uuid[], ${systemPrompt}::text)`,
  );
}

/** Takes up a turn again; returns its attempt count (crash takeovers only). */
export async function resumeTurn(db: Executor, lease: Lease, turnId: string): Promise<number> {
  const rows = (await call(
    db,
    lease,
    sql`SELECT herald_resume_turn(${lease.sessionId}::uuid, ${lease.token}::bigint, ${turnId}::uuid, ${lease.owner},
          ${lease.tookOver}) AS attempts`,
  )) as { attempts: number }[];
  return rows[0]?.attempts ?? 1;
}

export async function recordStep(db: Executor, lease: Lease, turnId: string, messages: NewMessage[], modelCall: ModelCallRow | null): Promise<void> {
  await call(
    db,
    lease,
    sql`SELECT herald_record_step(${lease.sessionId}::uuid, ${lease.token}::bigint, ${turnId}::uuid,
          ${messagesJson(messages)}::jsonb, ${modelCall === null ? null : storableJson(modelCall)}::jsonb)`,
  );
}

/**
 * A tool step's results, with the audit entries of the calls that made them, in one statement
 * (herald_record_results): both commit or neither, without a transaction's BEGIN and COMMIT.
 */
export async function recordResults(db: Executor, lease: Lease, turnId: string, messages: NewMessage[], audit: readonly AuditEntry[]): Promise<void> {
  await call(
    db,
    lease,
    sql`SELECT herald_record_results(${lease.sessionId}::uuid, ${lease.token}::bigint, ${turnId}::uuid,
          ${messagesJson(messages)}::jsonb, ${audit.length === 0 ? null : auditRowsJson(audit)}::jsonb)`,
  );
}

export interface TurnEnd {
  reply: string;
  failed: boolean;
  error: string | null;
  iterations: number;
  modelCall: ModelCallRow | null;
  /** The turn's completion event, recorded in the same call (herald_record_completion); none when omitted. */
  completion?: TurnCompletionCounts | undefined;
}

/** What the completion event of a finished turn counts (libs/knowledge/src/review-store.ts has the rules). */
export interface TurnCompletionCounts {
  profileId: string;
  userId: string;
  interrupted: boolean;
  errored: boolean;
  scheduled: boolean;
}

/** `reviewDue`: the completion found a review due and recorded nothing (record it with its job); null when it failed. */
export type FinishedTurn = NextInbox & { reviewDue: boolean | null };

/**
 * Ends the turn and reads what comes next in the same round trip (herald_finish_turn_next): the
 * turn's completion counts when given, and the session's inbox, with the lease released when
 * nothing is left to run.
 */
export async function finishTurn(db: Executor, lease: Lease, turnId: string, eventIds: string[], end: TurnEnd): Promise<FinishedTurn> {
  const done = end.completion;
  // With tracing on, the reply's outbox row takes the turn's traceparent, so its delivery joins the same trace.
  const rows = (await call(
    db,
    lease,
    sql`SELECT * FROM herald_finish_turn_next(${lease.sessionId}::uuid, ${lease.token}::bigint, ${turnId}::uuid, ${eventIds}::uuid[],
          ${storable(end.reply)}, ${end.failed}, ${end.error}::text, ${end.iterations}::integer,
          ${end.modelCall === null ? null : storableJson(end.modelCall)}::jsonb, ${currentTraceParent() ?? null}::text, ${INBOX_LIMIT}::integer,
          ${done?.profileId ?? null}::text, ${done?.userId ?? null}::text, ${done?.interrupted ?? false}, ${done?.errored ?? false},
          ${done?.scheduled ?? false}, ${CHAT_REPLY_PLATFORMS}::text[])`,
  )) as (InboxEntry & { review_due: boolean | null })[];
  return { ...inboxOf(rows), reviewDue: rows[0] === undefined ? false : rows[0].review_due };
}

export interface NewWait {
  id: string;
  toolCallId: string;
  kind: WaitKind;
  toolName: string;
  arguments: string;
  patternKey: string | null;
  prompt: string;
  choices: string[] | null;
  /** Calls of the same step after this one: they never started, so a resume runs them normally. */
  notStarted: string[];
  timeoutMs: number;
}

/** A button under the notice where the platform has them: its label and what pressing it sends. */
export interface WaitButton {
  text: string;
  data: string;
}

/**
 * Parks the turn on a wait for a person; the worker then lets the session go. On a chat platform
 * the notice (and its buttons) goes into the outbox in the same transaction.
 */
export async function suspendTurn(db: Executor, lease: Lease, turnId: string, wait: NewWait, notice: { text: string; buttons: WaitButton[] } | null = null): Promise<void> {
  const payload = {
    id: wait.id,
    tool_call_id: wait.toolCallId,
    kind: wait.kind,
    tool_name: wait.toolName,
    arguments: wait.arguments,
    pattern_key: wait.patternKey,
    prompt: wait.prompt,
    choices: wait.choices,
    not_started: wait.notStarted,
    timeout_ms: wait.timeoutMs,
  };
  await call(
    db,
    lease,
    sql`SELECT herald_suspend_turn(${lease.sessionId}::uuid, ${lease.token}::bigint, ${turnId}::uuid, ${storableJson(payload)}::jsonb,
          ${notice ? storable(notice.text) : null}::text, ${notice && notice.buttons.length > 0 ? storableJson(notice.buttons) : null}::jsonb,
          ${CHAT_REPLY_PLATFORMS}::text[])`,
  );
}
