import { z } from 'zod';
import { saveSessionTodos, sessionTodos } from '@herald/session';
import { defineTool } from '../shared/tool.ts';

// Hermes' caps for the todo list.
export const TODO_MAX_ITEMS = 256;
export const TODO_MAX_ITEM_CHARS = 4000;

const STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;

const todoItem = z.object({
  id: z.string().min(1).max(200).describe('Stable id, e.g. "1"'),
  content: z.string().min(1).max(TODO_MAX_ITEM_CHARS).describe('What needs doing'),
  status: z.enum(STATUSES),
  parent: z.string().min(1).max(200).optional().describe('Id of the parent item, for sub-tasks'),
});
type TodoItem = z.infer<typeof todoItem>;

const todoArgs = z.object({
  todos: z.array(todoItem).max(TODO_MAX_ITEMS).optional().describe('Items to write. Omit to read the current list.'),
  merge: z.boolean().optional().describe('Default false'),
});

function view(items: TodoItem[], revision: number): string {
  const counts = Object.fromEntries(STATUSES.map((status) => [status, 0])) as Record<string, number>;
  for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  return JSON.stringify({ todos: items, revision, counts });
}

export const todoTool = defineTool({
  name: 'todo',
  toolset: 'todo',
  description: 'The task list for this conversation: no arguments reads it, todos replaces it (merge=true: updates items by id, appends new ones). ' + 'Returns the list.',
  guidance: 'For work with three or more steps, keep a task list with the todo tool and update statuses as you go.',
  schema: todoArgs,
  replaySafe: true,
  async execute(args, context) {
    if (args.todos === undefined) {
      const stored = await sessionTodos(context.db, context.sessionId);
      return view(stored.items as TodoItem[], stored.revision);
    }
    const incoming = args.todos;
    return context.fencedWrite(async (trx) => {
      const row = await sessionTodos(trx, context.sessionId, true);
      let items: TodoItem[] = incoming;
      if (args.merge === true) {
        const current = [...(row.items as TodoItem[])];
        for (const update of incoming) {
          const at = current.findIndex((item) => item.id === update.id);
          if (at === -1) current.push(update);
          else current[at] = { ...current[at], ...update };
        }
        items = current;
      }
      const ids = new Set<string>();
      for (const item of items) {
        if (ids.has(item.id)) return `Error: duplicate todo id '${item.id}'; ids must be unique.`;
        ids.add(item.id);
      }
      if (items.length > TODO_MAX_ITEMS) {
        return `Error: the list would have ${items.length} items; the limit is ${TODO_MAX_ITEMS}. Remove completed items first.`;
      }
      const revision = row.revision + 1;
      await saveSessionTodos(trx, context.sessionId, items, revision);
      return view(items, revision);
    });
  },
});
