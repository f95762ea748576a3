import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, WaitKind, WaitStatus } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

export interface WaitView {
  id: string;
  sessionId: string;
  turnId: string;
  toolCallId: string;
  kind: WaitKind;
  toolName: string;
  arguments: string;
  prompt: string;
  choices: string[] | null;
  status: WaitStatus;
  answer: string | null;
  answeredBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  resolvedAt: Date | null;
}

const columns = [
  'id',
  'session_id',
  'turn_id',
  'tool_call_id',
  'kind',
  'tool_name',
  'arguments',
  'prompt',
  'choices',
  'status',
  'answer',
  'answered_by',
  'created_at',
  'expires_at',
  'resolved_at',
] as const;

type WaitRow = {
  id: string;
  session_id: string;
  turn_id: string;
  tool_call_id: string;
  kind: WaitKind;
  tool_name: string;
  arguments: string;
  prompt: string;
  choices: string[] | null;
  status: WaitStatus;
  answer: string | null;
  answered_by: string | null;
  created_at: Date;
  expires_at: Date;
  resolved_at: Date | null;
};

function view(row: WaitRow): WaitView {
  return {
    id: row.id,
    sessionId: row.session_id,
    turnId: row.turn_id,
    toolCallId: row.tool_call_id,
    kind: row.kind,
    toolName: row.tool_name,
    arguments: row.arguments,
    prompt: row.prompt,
    choices: row.choices,
    status: row.status,
    answer: row.answer,
    answeredBy: row.answered_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    resolvedAt: row.resolved_at,
  };
}

/** The wait a call of a turn is (or was) parked on. */
export async function findWait(db: Executor, turnId: string, toolCallId: string): Promise<WaitView | undefined> {
  const row = await db.selectFrom('tool_waits').select(columns).where('turn_id', '=', turnId).where('tool_call_id', '=', toolCallId).executeTakeFirst();
  return row ? view(row) : undefined;
}

export async function getWait(db: Executor, waitId: string): Promise<WaitView | undefined> {
  const row = await db.selectFrom('tool_waits').select(columns).where('id', '=', waitId).executeTakeFirst();
  return row ? view(row) : undefined;
}

/** A session's waits, pending first then the latest answered, for people and the API. */
export async function listWaits(db: Executor, sessionId: string, limit = 50): Promise<WaitView[]> {
  const rows = await db
    .selectFrom('tool_waits')
    .select(columns)
    .where('session_id', '=', sessionId)
    .orderBy(sql`status = 'pending'`, 'desc')
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map(view);
}

export async function pendingWaitOf(db: Executor, sessionId: string, kind?: WaitKind): Promise<WaitView | undefined> {
  let query = db.selectFrom('tool_waits').select(columns).where('session_id', '=', sessionId).where('status', '=', 'pending');
  if (kind !== undefined) query = query.where('kind', '=', kind);
  const row = await query.orderBy('created_at').limit(1).executeTakeFirst();
  return row ? view(row) : undefined;
}

/**
 * Answers a pending wait and makes its turn runnable. Returns the session to wake, or null when the
 * wait was no longer pending (answered already, or lapsed): the first answer wins.
 */
export async function resolveWait(
  db: Executor,
  waitId: string,
  resolution: { status: Exclude<WaitStatus, 'pending'>; answer?: string | null; by: string; remember?: boolean },
): Promise<string | null> {
  const result = await sql<{ session_id: string | null }>`
    SELECT herald_resolve_wait(${waitId}::uuid, ${resolution.status}, ${resolution.answer ?? null}::text, ${resolution.by},
      ${resolution.remember ?? false}) AS session_id`.execute(db);
  return result.rows[0]?.session_id ?? null;
}

/** What someone who may not answer a wait is told; the wait stays pending. */
export const NOT_YOURS_REPLY = 'Only the person whose request this is, or an operator, can answer it; it is still waiting for them.';

/**
 * Whether this person may answer the wait: the one whose turn asked, or an operator
 * (herald_may_answer_wait, the one definition of the rule, also used for clarify answers).
 */
export async function mayAnswerWait(db: Executor, waitId: string, userId: string, operators: readonly string[]): Promise<boolean> {
  const result = await sql<{ allowed: boolean }>`
    SELECT herald_may_answer_wait(${waitId}::uuid, ${userId}, ${[...operators]}::text[]) AS allowed`.execute(db);
  return result.rows[0]?.allowed === true;
}

/** Lapses every wait past its deadline; returns the sessions to wake with their wake generation. */
export async function expireWaits(db: Executor): Promise<{ sessionId: string; wakeGeneration: string }[]> {
  const result = await sql<{ session_id: string; wake_generation: string }>`
    WITH lapsed AS (
      SELECT herald_resolve_wait(id, 'expired', NULL, 'timeout', false) AS session_id
      FROM tool_waits WHERE status = 'pending' AND expires_at <= clock_timestamp()
    )
    SELECT DISTINCT s.id AS session_id, s.wake_generation FROM lapsed JOIN sessions s ON s.id = lapsed.session_id`.execute(db);
  return result.rows.map((row) => ({ sessionId: row.session_id, wakeGeneration: String(row.wake_generation) }));
}

/**
 * When a suspended turn resumes: the answered waits it has not taken yet, marked taken in the same
 * write. The calls they list never started, so they run normally; after this, a crash resumes with
 * the usual rule (unsafe calls are reported as interrupted, not repeated).
 */
export async function takeAnsweredWaits(trx: Transaction<Database>, turnId: string): Promise<Set<string>> {
  const rows = await trx
    .updateTable('tool_waits')
    .set({ consumed: true })
    .where('turn_id', '=', turnId)
    .where('consumed', '=', false)
    .where('status', '!=', 'pending')
    .returning(['tool_call_id', 'not_started'])
    .execute();
  return new Set(rows.flatMap((row) => [row.tool_call_id, ...row.not_started]));
}

export async function isPatternApproved(db: Executor, sessionId: string, patternKey: string): Promise<boolean> {
  const row = await db.selectFrom('session_approvals').select('pattern_key').where('session_id', '=', sessionId).where('pattern_key', '=', patternKey).executeTakeFirst();
  return row !== undefined;
}

export async function recordRefusal(db: Executor, refusal: { sessionId: string; turnId: string | null; toolName: string; role: string; userId: string; reason: string }): Promise<void> {
  await db
    .insertInto('tool_refusals')
    .values({
      session_id: refusal.sessionId,
      turn_id: refusal.turnId,
      tool_name: refusal.toolName,
      role: refusal.role,
      user_id: refusal.userId,
      reason: refusal.reason.slice(0, 1000),
    })
    .execute();
}

/** The answer a request withdrawn by /new records, for the turn and the audit trail. */
export const WITHDRAWN_BY_NEW = 'withdrawn: the conversation was reset with /new';

/**
 * Withdraws the pending approvals and questions of a session that /new just ended: approvals are
 * denied and questions lapse, so each parked turn resumes, ends, and frees its person's turn in
 * flight at once instead of at the timeout. Returns the session to wake when there were any.
 * Waits on subagents are left: their children end on their own.
 */
export async function withdrawWaits(trx: Transaction<Database>, sessionId: string, by: string): Promise<{ sessionId: string; wakeGeneration: string }[]> {
  const parked = await trx
    .selectFrom('tool_waits')
    .select(['id', 'kind'])
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .where('kind', 'in', ['approval', 'clarify'])
    .forUpdate()
    .execute();
  if (parked.length === 0) return [];
  for (const wait of parked) {
    await sql`SELECT herald_resolve_wait(${wait.id}::uuid, ${wait.kind === 'approval' ? 'denied' : 'expired'}, ${WITHDRAWN_BY_NEW}::text, ${by}, false)`.execute(trx);
  }
  const session = await trx.selectFrom('sessions').select('wake_generation').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return [{ sessionId, wakeGeneration: String(session.wake_generation) }];
}
