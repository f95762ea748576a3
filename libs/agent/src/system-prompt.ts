import { promptSafe } from './injection-scan.ts';

export const DEFAULT_IDENTITY =
  'You are Herald, an assistant that a team hosts for itself. You talk with the people of the team ' +
  'in their chat apps and through the API. Be direct and accurate; say so when you are unsure; ' +
  'never invent the results of tools you did not call.';

const PLATFORM_HINTS: Record<string, string> = {
  api: 'Replies go back as plain text over the HTTP API; Markdown is shown as typed.',
  telegram: 'Replies are shown in Telegram: keep them short, use simple Markdown.',
  discord: 'Replies are shown in Discord: Markdown works; keep messages under 2,000 characters.',
};

export interface SystemPromptInput {
  identity: string;
  /** Guidance lines of the tools this session may use, in a stable order. */
  toolGuidance: readonly string[];
  platform: string;
  /** The profile's context documents (AGENTS.md and the like), by name. */
  contextDocuments?: readonly { name: string; content: string }[];
  /** Frozen snapshot of the profile's memory entries. */
  memory?: readonly string[];
  /** Frozen snapshot of the person's user profile entries. */
  user?: readonly string[];
  model: string;
  now: Date;
}

function list(entries: readonly string[]): string {
  return entries.map((entry) => `§ ${promptSafe(entry)}`).join('\n');
}

/**
 * Builds the session's system prompt in three layers: stable (identity, tool guidance, platform
 * hints), context (the profile's documents) and volatile (the memory and user snapshots and the
 * timestamp line). It is built once, stored on the session row and reused byte for byte by every
 * worker, so memory written during the session appears only in the next session's prompt. Anything
 * a model or a person wrote is scanned and shows as `[BLOCKED: reason]` when it looks like injection.
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const stable = [input.identity.trim() === '' ? DEFAULT_IDENTITY : input.identity.trim()];
  if (input.toolGuidance.length > 0) {
    stable.push(['# Tools', ...input.toolGuidance.map((line) => `- ${line}`)].join('\n'));
  }
  const hint = PLATFORM_HINTS[input.platform];
  if (hint !== undefined) stable.push(hint);

  const context = (input.contextDocuments ?? []).map(
    (document) => `# Context: ${document.name}\n${promptSafe(document.content.trim())}`,
  );

  const volatile: string[] = [];
  if (input.memory && input.memory.length > 0) volatile.push(`# Memory (your notes)\n${list(input.memory)}`);
  if (input.user && input.user.length > 0) volatile.push(`# About the person you are talking to\n${list(input.user)}`);
  volatile.push(
    `Conversation started ${input.now.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${input.platform}. Model: ${input.model}.`,
  );
  return [...stable, ...context, ...volatile].join('\n\n');
}
