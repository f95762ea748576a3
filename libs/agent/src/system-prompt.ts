export const DEFAULT_IDENTITY =
  'You are Herald, an assistant that a team hosts for itself. You talk with the people of the team ' +
  'in their chat apps and through the API. Be direct and accurate; say so when you are unsure; ' +
  'never invent the results of tools you did not call.';

export interface SystemPromptInput {
  identity: string;
  /** Guidance lines of the tools this session may use, in a stable order. */
  toolGuidance: readonly string[];
  platform: string;
  model: string;
  now: Date;
}

/**
 * Builds the session's system prompt. It is built once, stored on the session row and reused byte
 * for byte by every worker, so nothing here may depend on the turn (the date line is the session's).
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const sections = [input.identity.trim() === '' ? DEFAULT_IDENTITY : input.identity.trim()];
  if (input.toolGuidance.length > 0) {
    sections.push(['# Tools', ...input.toolGuidance.map((line) => `- ${line}`)].join('\n'));
  }
  sections.push(
    `Conversation started ${input.now.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${input.platform}. Model: ${input.model}.`,
  );
  return sections.join('\n\n');
}
