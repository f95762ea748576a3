import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ALLOWED_VALUES } from '@herald/db';
import type { Db } from '@herald/db';
import type { Logger } from '@herald/core';
import { enqueueWake, publishSessionControl } from '@herald/queue';
import type { NoticeBus, RunQueue } from '@herald/queue';
import { turnStartedRuns, wakeGenerations } from '@herald/session';
import { cancelRuns, getRun, listRuns } from '@herald/subagents';
import type { SubagentRun } from '@herald/subagents';
import { childResults } from '@herald/tools';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams } from './contracts/common.ts';
import { runDetail, runList, runsCancelled } from './contracts/session-views.ts';

const runId = z.uuid({ error: 'expected a run id (uuid)' });
const listQuery = z.strictObject({
  session_id: z.uuid({ error: 'expected a session id (uuid)' }).optional(),
  status: z.enum(ALLOWED_VALUES['subagent_runs.status'], { error: `expected one of ${ALLOWED_VALUES['subagent_runs.status'].join(', ')}` }).optional(),
  before: runId.optional(),
  limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(200).default(50),
});

/** Whole reports in the API: the budget applies to what a parent's model reads, not to operators. */
const WHOLE_REPORT = 10_000_000;

export function runView(run: SubagentRun) {
  return {
    id: run.id,
    parent_session_id: run.parentSessionId,
    parent_turn_id: run.parentTurnId,
    tool_call_id: run.toolCallId,
    task_index: run.taskIndex,
    child_session_id: run.childSessionId,
    goal: run.goal,
    context: run.context,
    role: run.role,
    tools: run.tools,
    depth: run.depth,
    max_iterations: run.maxIterations,
    background: run.waitId === null,
    status: run.status,
    exit_reason: run.exitReason,
    created_at: run.createdAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}

export interface RunRouteDeps {
  db: Db;
  queue: RunQueue;
  notices: NoticeBus;
  queuePrefix: string;
  logger: Logger;
}

/** Cancels, stops the children that are running somewhere and wakes the parents that may resume. */
async function cancel(deps: RunRouteDeps, ids: string[]): Promise<string[]> {
  const cancelled = await cancelRuns(deps.db, ids);
  for (const run of cancelled) {
    await publishSessionControl(deps.notices, deps.queuePrefix, run.childSessionId, 'stop').catch((error: unknown) =>
      deps.logger.warn({ err: error, runId: run.runId }, 'stop notice failed; the child ends at its next step'),
    );
  }
  const parents = [...new Set(cancelled.map((run) => run.parentSessionId))];
  for (const row of await wakeGenerations(deps.db, parents)) {
    await enqueueWake(deps.queue, row.sessionId, row.wakeGeneration).catch((error: unknown) =>
      deps.logger.warn({ err: error, sessionId: row.sessionId }, 'wake-up enqueue failed; the reconciler will retry'),
    );
  }
  return cancelled.map((run) => run.runId);
}

/**
 * delegate_task's child runs (docs/subagents.md): list, inspect (with the child's result in
 * Hermes' shape once it ended) and cancel. A parent's cancel takes its children with it; the id
 * of a parent turn cancels every run it started.
 */
export function registerRunRoutes(app: FastifyInstance, deps: RunRouteDeps): void {
  const { db } = deps;
  app.get('/v1/runs', withContract({ summary: 'delegate_task child runs', tags: ['runs'], querystring: listQuery, response: { 200: runList } }), async (request, reply) => {
    const parsed = listQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const query = parsed.data;
    const page = await listRuns(db, { parentSessionId: query.session_id, status: query.status, before: query.before }, query.limit);
    const last = page.runs.at(-1);
    return { runs: page.runs.map(runView), next_before: page.more && last ? last.id : null };
  });

  app.get<{ Params: { id: string } }>(
    '/v1/runs/:id',
    withContract({ summary: 'A child run, with its result once it ended', tags: ['runs'], params: idParams, response: { 200: runDetail } }),
    async (request, reply) => {
      if (!runId.safeParse(request.params.id).success) return sendError(reply, 400, 'invalid_request', 'id: expected a run id (uuid)', 'id');
      const run = await getRun(db, request.params.id);
      if (!run) return sendError(reply, 404, 'not_found', 'no such run');
      const ended = run.status === 'done' || run.status === 'cancelled';
      const [result] = ended ? await childResults(db, [run], WHOLE_REPORT) : [];
      return { ...runView(run), result: result ?? null };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/runs/:id/cancel',
    withContract({ summary: 'Cancel a run (or every run of a parent turn) with its children', tags: ['runs'], params: idParams, response: { 200: runsCancelled } }),
    async (request, reply) => {
      const id = request.params.id;
      if (!runId.safeParse(id).success) return sendError(reply, 400, 'invalid_request', 'id: expected a run id (uuid)', 'id');
      const run = await getRun(db, id);
      if (!run && !(await turnStartedRuns(db, id))) return sendError(reply, 404, 'not_found', 'no such run');
      const cancelled = await cancel(deps, [id]);
      return { cancelled };
    },
  );
}
