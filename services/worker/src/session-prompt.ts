import type { Config } from '@herald/core';
import { buildSystemPrompt } from '@herald/agent';
import { loadPromptSources, promptPerson } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { LeasedSession } from '@herald/session';
import type { ToolRegistry } from '@herald/tools';

/**
 * A session's system prompt, built from what is stored now (memory, the person's profile, context
 * documents, skills). Built once per session and stored: on its first turn, and for a child
 * session when a compression starts one (so memory written since is in it).
 */
export async function buildSessionPrompt(
  deps: { config: Config; db: Db; registry: ToolRegistry },
  session: LeasedSession,
  offered: string[],
  userId: string,
  /** The profile's own model (`provider/model`); the deployment's HERALD_MODEL when not given. */
  modelRef?: string,
): Promise<string> {
  const { config, registry } = deps;
  const person = promptPerson(session.chatType, session.originUserId ?? (userId === '' ? null : userId));
  const sources = await loadPromptSources(deps.db, session.profileId, person);
  return buildSystemPrompt({
    identity: session.identity,
    toolGuidance: offered.map((name) => registry.get(name)?.guidance ?? '').filter((g) => g !== ''),
    platform: session.platform,
    contextDocuments: sources.documents,
    memory: sources.memory,
    user: sources.user,
    skills: offered.includes('skill_view') ? sources.skills : [],
    model: modelRef ?? (config.model.endpoint ? `${config.model.endpoint.provider}/${config.model.endpoint.model}` : 'none'),
    now: new Date(),
  });
}
