import { join } from 'node:path';
import type { Lease, LeasedSession } from '@herald/session';
import type { TurnDependencies } from './turn-runner.ts';

/**
 * The turn's registry and exposure with the session's own tools added: its MCP tools, frozen at
 * its first turn, so the definitions the model sees stay the same for the session's life.
 */
export async function withSessionTools(deps: TurnDependencies, lease: Lease, session: LeasedSession): Promise<TurnDependencies> {
  if (!deps.mcp) return deps;
  const { tools, joins } = await deps.mcp.sessionTools({
    sessionId: lease.sessionId,
    profileId: session.profileId,
    workspaceDir: join(deps.config.tools.workspaceRoot, session.profileId, lease.sessionId),
    firstTurn: session.systemPrompt === null,
  });
  if (tools.length === 0) return deps;
  const registry = deps.registry.withTools(tools);
  return { ...deps, registry, exposure: deps.exposure.withSessionTools(registry, joins) };
}
