import type { FakeHandler, FakeRequest } from './fake-llm.ts';

/** The first line of every child's prompt (libs/tools/src/delegation/subagent-prompt.ts). */
export const CHILD_PROMPT_MARK = 'You are a focused subagent';

export interface DelegatingModel {
  handler: FakeHandler;
  /** Child model calls in flight right now, and the most ever at once. */
  inFlight: () => number;
  maxInFlight: () => number;
  /** Goals of the children that called the model, in order of their first call. */
  childGoals: string[];
}

const isChild = (request: FakeRequest) => request.system.includes(CHILD_PROMPT_MARK);
const goalOf = (request: FakeRequest) => request.messages.find((m) => m.role === 'user')?.content ?? '';

/**
 * A model for delegation tests: a person's message `delegate: <json>` makes the parent call
 * delegate_task with that JSON; when the tool's result comes back the parent answers
 * `parent got: <result>`. A child answers `done: <goal>` after `childMs`; a goal containing
 * `spin` calls todo forever (over any budget), one containing `nest` calls delegate_task itself,
 * and `hold` waits for `release` before answering.
 */
export function delegatingModel(options: { childMs?: number; release?: Promise<void> } = {}): DelegatingModel {
  let inFlight = 0;
  let maxInFlight = 0;
  const childGoals: string[] = [];
  const child = async (request: FakeRequest) => {
    const goal = goalOf(request);
    if (!childGoals.includes(goal)) childGoals.push(goal);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (goal.includes('hold')) await options.release;
      await new Promise((resolve) => setTimeout(resolve, options.childMs ?? 0));
    } finally {
      inFlight--;
    }
    const last = request.messages.at(-1);
    if (goal.includes('spin')) return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: 'spin', status: 'in_progress' }] } }] };
    if (goal.includes('nest') && last?.role === 'user') return { toolCalls: [{ name: 'delegate_task', arguments: { goal: 'grandchild' } }] };
    if (goal.includes('nest')) return { text: `nested: ${last?.content ?? ''}` };
    return { text: `done: ${goal}` };
  };
  const handler: FakeHandler = async (request) => {
    if (isChild(request)) return child(request);
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return { text: `parent got: ${last.content}` };
    const match = /^delegate: (\{.*\})$/s.exec(request.lastUserText);
    if (match?.[1]) return { toolCalls: [{ name: 'delegate_task', arguments: JSON.parse(match[1]) as Record<string, unknown> }] };
    return { text: `echo: ${request.lastUserText}` };
  };
  return { handler, inFlight: () => inFlight, maxInFlight: () => maxInFlight, childGoals };
}
