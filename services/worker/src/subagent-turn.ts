import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { enqueueWake } from '@herald/queue';
import type { RunQueue } from '@herald/queue';
import { delegatingRoot, wakeGenerations } from '@herald/session';
import { runOfChildSession, SUBAGENT_PLATFORM } from '@herald/subagents';
import type { SubagentRun } from '@herald/subagents';
import type { LeasedSession } from '@herald/leases';

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

/** A child of delegate_task (docs/subagents.md): its run, and the session whose workspace it works in. */
export interface Subagent {
  run: SubagentRun;
  workspaceSessionId: string;
}

/** The run of a child session's turn; undefined for every other session (turn-shape.ts decides what it changes). */
export async function subagentOf(db: Db, session: Pick<LeasedSession, 'platform'>, sessionId: string): Promise<Subagent | undefined> {
  if (session.platform !== SUBAGENT_PLATFORM) return undefined;
  const run = await runOfChildSession(db, sessionId);
  if (!run) return undefined;
  return { run, workspaceSessionId: await delegatingRoot(db, sessionId) };
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
    await enqueueWake(queue, row.sessionId, row.wakeGeneration).catch((error: unknown) => logger.warn({ err: error, sessionId: row.sessionId }, 'wake-up enqueue failed; the reconciler will retry'));
  }
}
