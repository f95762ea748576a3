import { z } from 'zod';
import { writeMemory } from '@herald/knowledge';
import type { MemoryOperation, MemoryState } from '@herald/knowledge';
import { defineTool } from '../shared/tool.ts';

/** After this many failed memory calls in one turn the tool tells the model to stop retrying. */
export const MEMORY_FAILURES_PER_TURN = 3;

const action = z.enum(['add', 'replace', 'remove']);

const memoryArgs = z
  .object({
    action: action.optional().describe('add a new entry, replace one, or remove one'),
    target: z.enum(['memory', 'user']).default('memory').describe('memory: your notes; user: the person you talk to'),
    content: z.string().max(4000).optional().describe('The new entry text (add, replace)'),
    old_text: z.string().max(500).optional().describe('A short piece of the one entry to replace or remove'),
    operations: z
      .array(
        z.object({
          action,
          content: z.string().max(4000).optional(),
          old_text: z.string().max(500).optional(),
        }),
      )
      .min(1)
      .max(20)
      .optional()
      .describe('Several operations on the same target, applied all or nothing'),
  })
  .refine((args) => args.action !== undefined || args.operations !== undefined, {
    error: 'give an action (add, replace, remove) or a list of operations',
    path: ['action'],
  });

// Failed calls per turn. In-process and bounded: a turn that moves to another worker starts over,
// which only makes the stop-retrying hint come later.
const failures = new Map<string, number>();

function noteFailure(turnId: string): number {
  const count = (failures.get(turnId) ?? 0) + 1;
  failures.delete(turnId);
  failures.set(turnId, count);
  if (failures.size > 10_000) failures.delete(failures.keys().next().value as string);
  return count;
}

function view(state: MemoryState) {
  return {
    target: state.store,
    entries: state.entries.map((entry) => entry.content),
    usage: `${state.chars}/${state.limit} chars`,
  };
}

export const memoryTool = defineTool({
  name: 'memory',
  toolset: 'memory',
  description: 'Save durable facts for later conversations: your notes (target memory) or about the person (target user). ' + 'Entries reach the prompt from the next conversation.',
  guidance:
    'Save what will matter in later conversations with the memory tool: stable facts about the person (target user) and lessons about the work (target memory). Keep entries short; consolidate when memory is full.',
  schema: memoryArgs,
  replaySafe: false,
  async execute(args, context) {
    const operations: MemoryOperation[] = args.operations ?? [{ action: args.action ?? 'add', content: args.content, old_text: args.old_text }];
    const result = await context.fencedWrite((trx) => writeMemory(trx, { profileId: context.profileId, store: args.target, userId: context.userId }, operations));
    if (result.ok) return JSON.stringify({ success: true, ...view(result.state) });
    const failed = noteFailure(context.turnId);
    return JSON.stringify({
      success: false,
      error: result.error,
      ...view(result.state),
      ...(failed >= MEMORY_FAILURES_PER_TURN ? { note: `This is failed memory call ${failed} in this turn. Stop retrying; tell the person what could not be saved.` } : {}),
    });
  },
});
