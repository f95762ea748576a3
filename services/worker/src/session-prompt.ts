import { join } from 'node:path';
import type { Config } from '@herald/core';
import { buildSystemPrompt } from '@herald/agent';
import { loadPromptSources, promptPerson, readContextFiles } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { LeasedSession } from '@herald/leases';
import type { ToolRegistry } from '@herald/tools';

/** The session's workspace directory: a delegated child works in its root parent's. */
export function sessionWorkspace(config: Config, profileId: string, workspaceSessionId: string): string {
  return join(config.tools.workspaceRoot, profileId, workspaceSessionId);
}

/**
 * A session's system prompt, built from what is stored now (memory, the person's profile, context
 * documents, skills) and the project context files in the session's workspace. Built once per session and stored: on its first turn, and for a child
 * session when a compression starts one (so memory written since is in it).
 */
export async function buildSessionPrompt(
  deps: { config: Config; db: Db; registry: ToolRegistry },
  session: LeasedSession,
  offered: readonly string[],
  userId: string,
  workspaceDir: string,
  /** The profile's own model (`provider/model`); the deployment's HERALD_MODEL when not given. */
  modelRef?: string,
): Promise<string> {
  const { config, registry } = deps;
  const person = promptPerson(session.chatType, session.originUserId ?? (userId === '' ? null : userId));
  const [sources, projectFiles] = await Promise.all([loadPromptSources(deps.db, session.profileId, person), readContextFiles(workspaceDir)]);
  return buildSystemPrompt({
    identity: session.identity,
    toolGuidance: offered.map((name) => registry.get(name)?.guidance ?? '').filter((g) => g !== ''),
    platform: session.platform,
    contextDocuments: sources.documents,
    projectFiles,
    memory: sources.memory,
    user: sources.user,
    skills: offered.includes('skill_view') ? sources.skills : [],
    model: modelRef ?? (config.model.endpoint ? `${config.model.endpoint.provider}/${config.model.endpoint.model}` : 'none'),
    now: new Date(),
  });
}
