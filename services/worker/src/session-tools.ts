import { join } from 'node:path';
import type { Config } from '@herald/core';
import type { McpTools } from '@herald/mcp';
import type { Lease, LeasedSession } from '@herald/leases';
import type { ToolExposure, ToolRegistry } from '@herald/tools';

/** What the session's tools are added to: the part of the turn's dependencies they change (turn-runner.ts). */
interface ToolDependencies {
  config: Config;
  registry: ToolRegistry;
  exposure: ToolExposure;
  mcp?: McpTools | undefined;
}

/**
 * The turn's registry and exposure with the session's own tools added: its MCP tools, frozen at
 * its first turn, so the definitions the model sees stay the same for the session's life.
 */
export async function withSessionTools<D extends ToolDependencies>(deps: D, lease: Lease, session: LeasedSession): Promise<D> {
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
