import { API_PLATFORM, isChatPlatform, PLATFORM_FACTS } from '@herald/core';
import { promptSafe } from '@herald/knowledge';

export const DEFAULT_IDENTITY =
  'You are Herald, an assistant that a team hosts for itself. You talk with the people of the team ' +
  'in their chat apps and through the API. Be direct and accurate; say so when you are unsure; ' +
  'never invent the results of tools you did not call.';

const API_HINT = 'Replies go back as plain text over the HTTP API; Markdown is shown as typed.';

/** How replies are shown where the session lives: the API's, or the chat platform's from the registry. */
function platformHint(platform: string): string | undefined {
  if (platform === API_PLATFORM) return API_HINT;
  return isChatPlatform(platform) ? PLATFORM_FACTS[platform].promptHint : undefined;
}

export interface SystemPromptInput {
  identity: string;
  /** Guidance lines of the tools this session may use, in a stable order. */
  toolGuidance: readonly string[];
  platform: string;
  /** The profile's context documents (AGENTS.md and the like), by name. */
  contextDocuments?: readonly { name: string; content: string }[];
  /** The workspace's project context files (AGENTS.md and the like), already scanned and cut (readContextFiles). */
  projectFiles?: readonly { name: string; content: string }[];
  /** Frozen snapshot of the profile's memory entries. */
  memory?: readonly string[];
  /** Frozen snapshot of the person's user profile entries. */
  user?: readonly string[];
  /** The profile's skills index (only when the session has the skill tools). */
  skills?: readonly { name: string; description: string; category: string | null }[];
  model: string;
  now: Date;
}

function list(entries: readonly string[]): string {
  return entries.map((entry) => `§ ${promptSafe(entry)}`).join('\n');
}

/**
 * Progressive disclosure, as Hermes: only names and descriptions, grouped by category, go into the
 * prompt; the model loads a skill's body with skill_view when it is relevant.
 */
function skillsIndex(skills: readonly { name: string; description: string; category: string | null }[]): string {
  const groups = new Map<string, string[]>();
  for (const skill of [...skills].sort((a, b) => a.name.localeCompare(b.name))) {
    const category = skill.category ?? 'general';
    const lines = groups.get(category) ?? [];
    lines.push(`    - ${skill.name}: ${promptSafe(skill.description.replace(/\s+/g, ' '))}`);
    groups.set(category, lines);
  }
  const body = [...groups.keys()].sort().map((category) => `  ${category}:\n${groups.get(category)!.join('\n')}`);
  return [
    '# Skills',
    'Before answering, check the skills below. If one matches the task or is even partly relevant, load it with ' +
      'skill_view(name) and follow it. If a skill you used turns out wrong or outdated, patch it with skill_manage.',
    '<available_skills>',
    ...body,
    '</available_skills>',
  ].join('\n');
}

/** Hermes' project context block; the files were scanned when read, a blocked one is its `[BLOCKED: ...]` line. */
function projectContext(files: readonly { name: string; content: string }[]): string {
  const sections = files.map((file) => `## ${file.name}\n\n${file.content}`);
  return ['# Project Context', 'The following project context files from the workspace have been loaded and should be followed:', ...sections].join('\n\n');
}

/**
 * Builds the session's system prompt in three layers: stable (identity, tool guidance, platform
 * hints), context (the profile's documents and the workspace's project files) and volatile (the memory and user snapshots and the
 * timestamp line). It is built once, stored on the session row and reused byte for byte by every
 * worker, so memory written during the session appears only in the next session's prompt. Anything
 * a model or a person wrote is scanned and shows as `[BLOCKED: reason]` when it looks like injection.
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const stable = [input.identity.trim() === '' ? DEFAULT_IDENTITY : input.identity.trim()];
  if (input.toolGuidance.length > 0) {
    stable.push(['# Tools', ...input.toolGuidance.map((line) => `- ${line}`)].join('\n'));
  }
  if (input.skills && input.skills.length > 0) stable.push(skillsIndex(input.skills));
  const hint = platformHint(input.platform);
  if (hint !== undefined) stable.push(hint);

  const context = (input.contextDocuments ?? []).map((document) => `# Context: ${document.name}\n${promptSafe(document.content.trim())}`);

  if (input.projectFiles && input.projectFiles.length > 0) context.push(projectContext(input.projectFiles));

  const volatile: string[] = [];
  if (input.memory && input.memory.length > 0) volatile.push(`# Memory (your notes)\n${list(input.memory)}`);
  if (input.user && input.user.length > 0) volatile.push(`# About the person you are talking to\n${list(input.user)}`);
  volatile.push(`Conversation started ${input.now.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${input.platform}. Model: ${input.model}.`);
  return [...stable, ...context, ...volatile].join('\n\n');
}
