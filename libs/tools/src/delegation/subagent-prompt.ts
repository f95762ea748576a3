import type { SubagentRole } from '@herald/db';

/**
 * The focused prompt a child runs under, instead of the profile's prompt, memory and context files
 * (Hermes' ephemeral subagent prompt): the task, its context, where its files are, what to report.
 */
export function subagentPrompt(task: { goal: string; context: string | undefined; role: SubagentRole; maxChildren: number }): string {
  const parts = [
    'You are a focused subagent: another agent handed you one task. Work on it with your tools, then give one final answer.',
    `YOUR TASK:\n${task.goal}`,
    `CONTEXT:\n${task.context?.trim() ? task.context.trim() : '(none given)'}`,
    'WORKSPACE PATH:\nYour file and terminal tools work in the workspace of the conversation that delegated this task, ' +
      'shared with the agent that delegated it: files you create there are theirs to read.',
  ];
  if (task.role === 'orchestrator') {
    parts.push(`SPAWNING:\nYou may hand independent subtasks to subagents of your own with delegate_task (at most ${task.maxChildren} per call).`);
  }
  parts.push(
    'When finished, provide a clear, concise summary of: what you did, what you found, files created or modified, ' +
      'and any issues or open questions. Nobody can answer questions while you work: decide, and say what you assumed.',
  );
  return parts.join('\n\n');
}
