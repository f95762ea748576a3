import type { ReviewKind } from '@herald/db';

/** The only tools a background review may run; every other call is refused. */
export const REVIEW_TOOL_NAMES: readonly string[] = ['memory', 'skills_list', 'skill_view', 'skill_manage'];

/** Hermes' cap for the review fork. */
export const REVIEW_MAX_ITERATIONS = 16;

export function refusedToolResult(name: string): string {
  return `Tool '${name}' is not available in background review: only memory and skill tools ` + `(${REVIEW_TOOL_NAMES.join(', ')}) may run here. Nothing was executed.`;
}

const MEMORY_PART = `## Memory
Look for what will matter in later conversations and save it with the memory tool:
- target user: facts about the person (name, role, preferences, how they like answers and work done), especially anything they corrected.
- target memory: durable lessons about the work (team conventions, environment facts, decisions).
Skip what is already in memory (see the system prompt), one-off task details, and anything true only today.`;

const SKILL_PART = `## Skills
Look for a reusable procedure: a non-trivial technique that worked, a correction of how a task should be done, or a loaded skill that turned out wrong or outdated. Improve skills rather than multiply them. In this order of preference:
1. If a skill was used in this conversation (skill_view) and it was wrong, incomplete or outdated, patch that skill.
2. Otherwise find an existing broader skill for this class of task (skills_list, then skill_view) and patch it.
3. If the new knowledge is a detail of such a skill, add a supporting file to it with write_file (references/<topic>.md, templates/<name>.<ext> or scripts/<name>.<ext>) and patch a one-line pointer to it into its SKILL.md.
4. Only if no existing skill fits, create a new class-level skill: a name for the class of task (never a ticket number, an error string or a one-day fix), frontmatter name and description, then the procedure.
You must view a skill file with skill_view before you patch or rewrite it. Do not capture environment-specific failures, claims that a tool does not work, transient errors, or one-off narratives.`;

/**
 * The review instruction, appended as the last user message after the session's own transcript,
 * so every earlier byte of the request matches what the session sent and hits the prefix cache.
 */
export function reviewInstruction(kinds: readonly ReviewKind[]): string {
  const parts = ['[Background review] The conversation above has ended for now. Review it and save what is worth keeping. ' + 'Be active: saving nothing should be a judgement, not the default.'];
  if (kinds.includes('memory')) parts.push(MEMORY_PART);
  if (kinds.includes('skill')) parts.push(SKILL_PART);
  parts.push(
    `You are running as a background review: you can call only memory and skill tools (${REVIEW_TOOL_NAMES.join(', ')}); ` +
      'every other tool is refused. The person will not see this exchange. ' +
      "Finish with one line saying what you saved, or 'Nothing to save.'",
  );
  return parts.join('\n\n');
}
