import type { Logger } from '@herald/core';
import { scheduledRunFor, SCHEDULED_PLATFORM } from '@herald/cron';
import { toolPolicySchema } from '@herald/tools';
import type { CallerRole, ToolPolicy } from '@herald/tools';
import type { TurnModels } from './profile-models.ts';
import { sessionWorkspace } from './session-prompt.ts';
import { subagentOf } from './subagent-turn.ts';
import type { TurnInput, TurnShape } from './turn-context.ts';

function parsePolicy(stored: Record<string, unknown>, logger: Logger, profileId: string): ToolPolicy {
  const parsed = toolPolicySchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  // The API validates policies on write; a hand-edited bad one must not widen anything.
  logger.error({ profileId, issues: parsed.error.issues }, 'stored tool policy is invalid; offering the safe toolset only');
  return { enabled: ['safe'] };
}

/**
 * How this turn differs by its session, decided here and nowhere else. A chat's turn is the
 * default. A scheduled run's gets the 'cron' role and its job's toolsets (still minus what no
 * unattended run may have). A child of delegate_task (docs/subagents.md) gets the 'subagent' role
 * (no approvals, no questions; clarify, memory and cronjob denied last), everything the profile's
 * policy allows narrowed to the tools its run was given, its run's iteration budget, the children's
 * model (HERALD_DELEGATION_MODEL, or the profile's `delegation`), the delegating session's
 * workspace, and neither recall nor a chat draft: it works from its focused prompt, for its parent.
 */
export async function shapeTurn(input: TurnInput, models: TurnModels): Promise<TurnShape> {
  const { deps, lease, session, events } = input;
  const { config, db, exposure } = deps;
  const child = await subagentOf(db, session, lease.sessionId);
  const role: CallerRole = child ? 'subagent' : session.platform === SCHEDULED_PLATFORM ? 'cron' : 'chat';
  const jobToolsets = child ? ['all'] : role === 'cron' && events[0] ? (await scheduledRunFor(db, events[0].id))?.toolsets : undefined;
  const policy = parsePolicy(session.toolPolicy, deps.logger, session.profileId);
  const allowed = child ? new Set(child.run.tools) : undefined;
  return {
    role,
    permitted: (userId) => {
      const tools = exposure.resolve({ policy, platform: session.platform, role, userId, jobToolsets });
      return allowed ? tools.filter((tool) => allowed.has(tool)) : tools;
    },
    maxIterations: child?.run.maxIterations ?? config.roles.worker.maxIterations,
    iterationLimitError: child ? 'max_iterations' : null,
    workspace: sessionWorkspace(config, session.profileId, child?.workspaceSessionId ?? lease.sessionId),
    provider: child && models.childProvider ? models.childProvider : models.provider,
    recall: child === undefined,
    drafted: child === undefined,
    run: child?.run,
  };
}
