import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, SubagentExitReason, SubagentRole, SubagentRunStatus } from '@herald/db';
import { limitPassed } from '@herald/limits';

type Executor = Kysely<Database> | Transaction<Database>;

/** The platform of child sessions: never routed, never delivered to a chat. */
export const SUBAGENT_PLATFORM = 'subagent';

export interface NewChildRun {
  taskIndex: number;
  goal: string;
  context: string | null;
  role: SubagentRole;
  tools: string[];
  /** The child's frozen system prompt: the focused subagent prompt (no memory, no context files). */
  systemPrompt: string;
}

export interface ChildRunsInput {
  parentSessionId: string;
  parentTurnId: string;
  toolCallId: string;
  /** The wait the parent parks on; null for background children. */
  waitId: string | null;
  profileId: string;
  userId: string;
  depth: number;
  maxIterations: number;
  tasks: NewChildRun[];
  /** The person's limits as herald_check_limits takes them (limitsArgument); null: none on. */
  limits: string | null;
}

export interface SubagentRun {
  id: string;
  parentSessionId: string;
  parentTurnId: string;
  toolCallId: string;
  waitId: string | null;
  taskIndex: number;
  childSessionId: string;
  goal: string;
  context: string | null;
  role: SubagentRole;
  tools: string[];
  depth: number;
  maxIterations: number;
  status: SubagentRunStatus;
  exitReason: SubagentExitReason | null;
  /** Why the person's limits refused the child before it started (exit reason 'refused'). */
  refusal: string | null;
  userId: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

const columns = [
  'id',
  'parent_session_id',
  'parent_turn_id',
  'tool_call_id',
  'wait_id',
  'task_index',
  'child_session_id',
  'goal',
  'context',
  'role',
  'tools',
  'depth',
  'max_iterations',
  'status',
  'exit_reason',
  'refusal',
  'user_id',
  'created_at',
  'started_at',
  'finished_at',
] as const;

type RunRow = {
  id: string;
  parent_session_id: string;
  parent_turn_id: string;
  tool_call_id: string;
  wait_id: string | null;
  task_index: number;
  child_session_id: string;
  goal: string;
  context: string | null;
  role: SubagentRole;
  tools: string[];
  depth: number;
  max_iterations: number;
  status: SubagentRunStatus;
  exit_reason: SubagentExitReason | null;
  refusal: string | null;
  user_id: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};

function view(row: RunRow): SubagentRun {
  return {
    id: row.id,
    parentSessionId: row.parent_session_id,
    parentTurnId: row.parent_turn_id,
    toolCallId: row.tool_call_id,
    waitId: row.wait_id,
    taskIndex: row.task_index,
    childSessionId: row.child_session_id,
    goal: row.goal,
    context: row.context,
    role: row.role,
    tools: row.tools,
    depth: row.depth,
    maxIterations: row.max_iterations,
    status: row.status,
    exitReason: row.exit_reason,
    refusal: row.refusal,
    userId: row.user_id,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** A child createChildRuns made: `refused` ones never run (their run is done, exit reason 'refused'). */
export interface CreatedChild {
  runId: string;
  sessionId: string;
  refused: boolean;
}

/**
 * Creates one child session per task with its frozen prompt, its one pending event (the goal, as
 * the delegating person's) and its run row, in the caller's (fenced) transaction. Each child is
 * first checked against the person's limits (herald_check_limits), counting the parent's turn and
 * the children created before it, which are the person's turns in flight: one past a limit gets no
 * event and a run already done with exit reason 'refused' and the reason. The caller wakes the
 * children that will run after the commit; the reconciler finds any it could not wake.
 */
export async function createChildRuns(trx: Transaction<Database>, input: ChildRunsInput): Promise<CreatedChild[]> {
  const created: CreatedChild[] = [];
  for (const task of input.tasks) {
    const runId = randomUUID();
    const sessionId = randomUUID();
    const refused = await limitPassed(trx, input.userId, input.limits);
    await trx
      .insertInto('sessions')
      .values(childSession(input, task, runId, sessionId))
      .execute();
    if (refused === undefined) {
      await trx
        .insertInto('inbound_events')
        .values({ id: randomUUID(), session_id: sessionId, platform: SUBAGENT_PLATFORM, user_id: input.userId, user_name: 'delegate_task', text: task.goal })
        .execute();
    }
    const settled = refused === undefined ? {} : { status: 'done' as const, exit_reason: 'refused' as const, refusal: refused.message, started_at: new Date(), finished_at: new Date() };
    await trx
      .insertInto('subagent_runs')
      .values({ ...runRow(input, task, runId, sessionId), ...settled })
      .execute();
    created.push({ runId, sessionId, refused: refused !== undefined });
  }
  return created;
}

function childSession(input: ChildRunsInput, task: NewChildRun, runId: string, sessionId: string) {
  return {
    id: sessionId,
    profile_id: input.profileId,
    session_key: `subagent:${runId}`,
    platform: SUBAGENT_PLATFORM,
    chat_type: 'subagent',
    chat_id: runId,
    origin_user_id: input.userId,
    system_prompt: task.systemPrompt,
    delegated_from: input.parentSessionId,
  };
}

function runRow(input: ChildRunsInput, task: NewChildRun, runId: string, sessionId: string) {
  return {
    id: runId,
    parent_session_id: input.parentSessionId,
    parent_turn_id: input.parentTurnId,
    tool_call_id: input.toolCallId,
    wait_id: input.waitId,
    task_index: task.taskIndex,
    child_session_id: sessionId,
    goal: task.goal,
    context: task.context,
    role: task.role,
    tools: task.tools,
    depth: input.depth,
    max_iterations: input.maxIterations,
    user_id: input.userId,
  };
}

/** The runs one delegate_task call started, by task index. */
export async function runsOfCall(db: Executor, turnId: string, toolCallId: string): Promise<SubagentRun[]> {
  const rows = await db.selectFrom('subagent_runs').select(columns).where('parent_turn_id', '=', turnId).where('tool_call_id', '=', toolCallId).orderBy('task_index').execute();
  return rows.map(view);
}

/** The run a child session belongs to; undefined for every other session. */
export async function runOfChildSession(db: Executor, sessionId: string): Promise<SubagentRun | undefined> {
  const row = await db.selectFrom('subagent_runs').select(columns).where('child_session_id', '=', sessionId).executeTakeFirst();
  return row ? view(row) : undefined;
}

export async function getRun(db: Executor, runId: string): Promise<SubagentRun | undefined> {
  const row = await db.selectFrom('subagent_runs').select(columns).where('id', '=', runId).executeTakeFirst();
  return row ? view(row) : undefined;
}

/** Background children of a session still queued or running (the concurrency cap counts them). */
export async function openBackgroundRuns(db: Executor, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('subagent_runs')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('parent_session_id', '=', sessionId)
    .where('wait_id', 'is', null)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface RunFilter {
  parentSessionId?: string | undefined;
  status?: SubagentRunStatus | undefined;
  /** Keyset cursor: runs created before this one (newest first). */
  before?: string | undefined;
}

/** Runs newest first, `limit` per page. */
export async function listRuns(db: Executor, filter: RunFilter, limit: number): Promise<{ runs: SubagentRun[]; more: boolean }> {
  let query = db.selectFrom('subagent_runs').select(columns);
  if (filter.parentSessionId !== undefined) query = query.where('parent_session_id', '=', filter.parentSessionId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.before !== undefined) {
    const before = filter.before;
    query = query.where(sql<boolean>`(created_at, id) < (SELECT r.created_at, r.id FROM subagent_runs r WHERE r.id = ${before}::uuid)`);
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { runs: rows.slice(0, limit).map(view), more: rows.length > limit };
}

/**
 * Cancels runs (by run id, or every run of a parent turn) and their descendants
 * (herald_cancel_runs). Returns the cancelled runs' child sessions, to stop where they run, and
 * the parent sessions to wake.
 */
export async function cancelRuns(db: Executor, ids: string[]): Promise<{ runId: string; childSessionId: string; parentSessionId: string }[]> {
  const result = await sql<{ run_id: string; child_session_id: string; parent_session_id: string }>`
    SELECT * FROM herald_cancel_runs(${ids}::uuid[])`.execute(db);
  return result.rows.map((row) => ({ runId: row.run_id, childSessionId: row.child_session_id, parentSessionId: row.parent_session_id }));
}
