import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { DelegationConfig, QuotaConfig } from '@herald/core';
import { limitsArgument } from '@herald/limits';
import { createChildRuns, openBackgroundRuns, runOfChildSession, runsOfCall } from '@herald/subagents';
import type { NewChildRun, SubagentRun } from '@herald/subagents';
import type { SubagentRole } from '@herald/db';
import { defineTool } from '../shared/tool.ts';
import type { CallContext } from '../shared/tool.ts';
import { childResults } from './delegate-report.ts';
import { subagentPrompt } from './subagent-prompt.ts';

/**
 * What no child gets, whatever it asks for (Hermes' DELEGATE_BLOCKED_TOOLS, as Herald names them):
 * nobody answers a child's question, long-term memory is the person's, jobs are not a child's to
 * create, and only an orchestrator below the depth limit keeps delegate_task.
 */
export const DELEGATE_BLOCKED_TOOLS: readonly string[] = ['delegate_task', 'clarify', 'memory', 'send_message', 'cronjob'];

const toolsetList = z.array(z.string().trim().min(1).max(64)).max(50).optional();
const role = z.enum(['leaf', 'orchestrator']).optional();
const task = z.object({
  goal: z.string().trim().min(1, { error: 'give the task a goal' }).max(20_000),
  context: z.string().max(50_000).optional(),
  toolsets: toolsetList,
  role,
});

const schema = z
  .object({
    goal: z.string().trim().min(1).max(20_000).optional().describe('A single task: what the subagent should achieve.'),
    context: z.string().max(50_000).optional().describe('What the subagent needs to know: it sees nothing of this conversation.'),
    toolsets: toolsetList.describe('Toolsets the subagent may use, within yours; default: yours.'),
    role: role.describe('"orchestrator" lets the subagent delegate in turn (within the depth limit).'),
    tasks: z.array(task).min(1).max(100).optional().describe('A batch of tasks run in parallel, instead of goal.'),
    background: z.boolean().optional().describe('Return at once; each result arrives later as a message in this conversation.'),
  })
  .refine((args) => (args.goal === undefined) !== (args.tasks === undefined), { error: 'give either goal or tasks, not both' });

type Args = z.infer<typeof schema>;

export interface DelegateToolOptions {
  config: DelegationConfig;
  /** The per-person limits every child is checked against before it starts (docs/subagents.md, "Limits"). */
  limits?: QuotaConfig | undefined;
  /** Toolset names to tool names (the built-in catalog and registered tools). */
  expand(toolsets: readonly string[]): string[];
  /** Wakes the child sessions once their rows are committed; the reconciler covers a failure. */
  wake(sessionIds: string[]): Promise<void>;
}

const error = (message: string) => JSON.stringify({ error: message });

function childTools(options: DelegateToolOptions, offered: readonly string[], requested: string[] | undefined, keepsDelegation: boolean): string[] {
  const parent = new Set(offered);
  const wanted = requested === undefined ? [...parent] : options.expand(requested).filter((tool) => parent.has(tool));
  return wanted.filter((tool) => !DELEGATE_BLOCKED_TOOLS.includes(tool) || (tool === 'delegate_task' && keepsDelegation)).sort();
}

async function finishedOrParked(options: DelegateToolOptions, runs: SubagentRun[], context: CallContext): Promise<string> {
  const first = runs[0];
  if (first?.waitId === null) return started(runs);
  if (runs.some((run) => run.status === 'queued' || run.status === 'running')) context.parkOnRuns(first?.waitId ?? '', runs.length);
  return JSON.stringify({ results: await childResults(context.db, runs, options.config.maxSummaryChars) });
}

function started(runs: { id: string; taskIndex: number; refused?: boolean }[]): string {
  return JSON.stringify({
    status: 'started',
    background: true,
    runs: runs.map((run) => ({ task_index: run.taskIndex, run_id: run.id, ...(run.refused === true ? { status: 'refused' } : {}) })),
    note: 'Each result will arrive later as a message in this conversation. Do not wait for it or poll.',
  });
}

async function delegate(options: DelegateToolOptions, args: Args, context: CallContext): Promise<string> {
  const { config } = options;
  const existing = await runsOfCall(context.db, context.turnId, context.toolCallId);
  if (existing.length > 0) return finishedOrParked(options, existing, context);
  const tasks = args.tasks ?? [{ goal: args.goal ?? '', context: args.context, toolsets: args.toolsets, role: args.role }];
  if (tasks.length > config.maxConcurrentChildren) {
    return error(
      `Too many tasks: ${tasks.length} provided, but at most ${config.maxConcurrentChildren} run at once ` +
        '(HERALD_DELEGATION_MAX_CONCURRENT_CHILDREN). Send at most that many per call, or combine tasks.',
    );
  }
  const depth = (await runOfChildSession(context.db, context.sessionId))?.depth ?? 0;
  if (depth >= config.maxSpawnDepth) {
    return error(`Delegation depth limit reached (depth=${depth}, max_spawn_depth=${config.maxSpawnDepth}). Do the task yourself.`);
  }
  const childDepth = depth + 1;
  const children: NewChildRun[] = tasks.map((item, index) => {
    const childRole: SubagentRole = item.role === 'orchestrator' && config.orchestratorEnabled && childDepth < config.maxSpawnDepth ? 'orchestrator' : 'leaf';
    return {
      taskIndex: index,
      goal: item.goal,
      context: item.context ?? null,
      role: childRole,
      tools: childTools(options, context.offered ?? [], item.toolsets, childRole === 'orchestrator'),
      systemPrompt: subagentPrompt({ goal: item.goal, context: item.context, role: childRole, maxChildren: config.maxConcurrentChildren }),
    };
  });
  // Hermes: background units share the cap; past it, the call runs in the foreground instead.
  const background = args.background === true && (await openBackgroundRuns(context.db, context.sessionId)) + tasks.length <= config.maxConcurrentChildren;
  const waitId = background ? null : randomUUID();
  const created = await context.fencedWrite((trx) =>
    createChildRuns(trx, {
      parentSessionId: context.sessionId,
      parentTurnId: context.turnId,
      toolCallId: context.toolCallId,
      waitId,
      profileId: context.profileId,
      userId: context.userId,
      depth: childDepth,
      maxIterations: config.maxIterations,
      tasks: children,
      limits: limitsArgument(options.limits),
    }),
  );
  const running = created.filter((child) => !child.refused);
  await options.wake(running.map((child) => child.sessionId));
  if (waitId === null) return started(created.map((child, index) => ({ id: child.runId, taskIndex: index, refused: child.refused })));
  // Every child refused: nothing to wait for, the refusals are the results.
  if (running.length === 0) return finishedOrParked(options, await runsOfCall(context.db, context.turnId, context.toolCallId), context);
  return context.parkOnRuns(waitId, running.length);
}

/**
 * Hermes' delegate_task on the run queue: each task becomes a child session run by whichever
 * worker is free; the parent's turn parks (no worker waits) and resumes with every child's result
 * when the last one ends. Background children post their result into this session instead.
 */
export function createDelegateTool(options: DelegateToolOptions) {
  return defineTool<Args>({
    name: 'delegate_task',
    toolset: 'delegation',
    description:
      `Hand a self-contained task (or up to ${options.config.maxConcurrentChildren} in parallel) to subagents with fresh context; ` +
      'each works with its own tools and budget and reports back a summary.',
    guidance: 'delegate_task: for independent, well-specified subtasks that can run in parallel; do small things yourself.',
    schema,
    // On resume the call finds its runs by call id: it parks again or reports, never starts twice.
    replaySafe: true,
    execute: (args, context) => delegate(options, args, context),
  });
}
