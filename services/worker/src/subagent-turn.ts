import type { Logger } from '@herald/core';
import type { Provider } from '@herald/agent';
import type { Db } from '@herald/db';
import { enqueueWake } from '@herald/queue';
import type { RunQueue } from '@herald/queue';
import { delegatingRoot, runOfChildSession, SUBAGENT_PLATFORM, wakeGenerations } from '@herald/session';
import type { LeasedSession, SubagentRun } from '@herald/session';
import type { CallerRole } from '@herald/tools';

/**
 * How a turn differs when its session is a child of delegate_task (docs/subagents.md): the
 * 'subagent' role (no approvals, no questions; clarify, memory and cronjob denied last), the
 * tools its run was given and no more, its own iteration budget and model, and the delegating
 * session's workspace. Every other session's turn gets `ORDINARY`.
 */
export interface TurnShape {
  role: CallerRole | undefined;
  jobToolsets: readonly string[] | undefined;
  within(tools: string[]): string[];
  maxIterations: number | undefined;
  workspaceSessionId: string | undefined;
  /** The turn's `error` when it ends at its iteration budget: the run's exit reason. */
  iterationLimitError: string | null;
  child: boolean;
  /** The child's run: what subagent_start and subagent_stop carry. */
  run?: SubagentRun | undefined;
}

/** What the subagent hooks carry besides the turn's own fields (docs/hooks.md). */
export function subagentEvent(run: SubagentRun, outcome?: string): Record<string, unknown> {
  const exit = outcome === undefined ? {} : { exit_reason: exitReasonOf(outcome) };
  return {
    run_id: run.id,
    parent_session_id: run.parentSessionId,
    parent_turn_id: run.parentTurnId,
    task_index: run.taskIndex,
    goal: run.goal,
    role: run.role,
    depth: run.depth,
    ...exit,
  };
}

/** The run's exit reason for a turn outcome (herald_subagent_turn_ended says the same in SQL). */
function exitReasonOf(outcome: string): string {
  if (outcome === 'answered') return 'completed';
  if (outcome === 'iteration_limit') return 'max_iterations';
  if (outcome === 'limited') return 'refused';
  return outcome === 'stopped' ? 'interrupted' : 'error';
}

const ORDINARY: TurnShape = {
  role: undefined,
  jobToolsets: undefined,
  within: (tools) => tools,
  maxIterations: undefined,
  workspaceSessionId: undefined,
  iterationLimitError: null,
  child: false,
};

export async function turnShapeOf(db: Db, session: Pick<LeasedSession, 'platform'>, sessionId: string): Promise<TurnShape> {
  if (session.platform !== SUBAGENT_PLATFORM) return ORDINARY;
  const run = await runOfChildSession(db, sessionId);
  if (!run) return ORDINARY;
  const allowed = new Set(run.tools);
  return {
    role: 'subagent',
    // Everything the profile's policy allows, then narrowed to the run's tools.
    jobToolsets: ['all'],
    within: (tools) => tools.filter((tool) => allowed.has(tool)),
    maxIterations: run.maxIterations,
    workspaceSessionId: await delegatingRoot(db, sessionId),
    iterationLimitError: 'max_iterations',
    child: true,
    run,
  };
}

/** A child's model: HERALD_DELEGATION_MODEL's provider when set, else the main one. */
export function providerFor(shape: TurnShape, main: Provider | null, child: Provider | null | undefined): Provider | null {
  return shape.child && child ? child : main;
}

/**
 * After a child's turn: its end answered the parent's wait (or posted a background result) in the
 * same transaction; this wakes the parent now. Best effort: the reconciler wakes it otherwise.
 */
export async function wakeParentOf(db: Db, queue: RunQueue, platform: string, sessionId: string, logger: Logger): Promise<void> {
  if (platform !== SUBAGENT_PLATFORM) return;
  const run = await runOfChildSession(db, sessionId);
  if (!run) return;
  await wakeSessions(db, queue, [run.parentSessionId], logger);
}

export async function wakeSessions(db: Db, queue: RunQueue, sessionIds: string[], logger: Logger): Promise<void> {
  if (sessionIds.length === 0) return;
  for (const row of await wakeGenerations(db, sessionIds)) {
    await enqueueWake(queue, row.sessionId, row.wakeGeneration).catch((error: unknown) =>
      logger.warn({ err: error, sessionId: row.sessionId }, 'wake-up enqueue failed; the reconciler will retry'),
    );
  }
}
