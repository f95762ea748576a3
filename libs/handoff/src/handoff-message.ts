import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';

// The one short message /handoff posts in the home chat: where the work stands, from what is
// stored (no model call, so a handoff cannot fail on the model): the last thing asked, the last
// answer, the todo list, and whether something is still running or waiting for the person.

export interface WorkStanding {
  lastAsked: string | null;
  lastAnswer: string | null;
  todosOpen: number;
  todosDone: number;
  running: boolean;
  waiting: boolean;
}

const QUOTE_CHARS = 160;

function quote(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= QUOTE_CHARS ? line : `${line.slice(0, QUOTE_CHARS - 1)}…`;
}

export async function workStanding(trx: Transaction<Database>, sessionId: string): Promise<WorkStanding> {
  const last = async (role: 'user' | 'assistant') =>
    (await trx.selectFrom('messages').select('content').where('session_id', '=', sessionId).where('role', '=', role).where('content', '<>', '').orderBy('seq', 'desc').limit(1).executeTakeFirst())
      ?.content ?? null;
  const todos = await trx.selectFrom('session_todos').select('items').where('session_id', '=', sessionId).executeTakeFirst();
  const items = Array.isArray(todos?.items) ? (todos.items as { status?: unknown }[]) : [];
  const turns = await trx.selectFrom('turns').select('status').where('session_id', '=', sessionId).where('status', 'in', ['running', 'waiting']).execute();
  return {
    lastAsked: await last('user'),
    lastAnswer: await last('assistant'),
    todosOpen: items.filter((item) => item.status === 'pending' || item.status === 'in_progress').length,
    todosDone: items.filter((item) => item.status === 'completed').length,
    running: turns.some((turn) => turn.status === 'running'),
    waiting: turns.some((turn) => turn.status === 'waiting'),
  };
}

export function handoffMessage(fromPlatform: string, title: string | null, standing: WorkStanding): string {
  const lines = [`Handed off from ${fromPlatform}${title === null ? '' : ` ("${quote(title)}")`}: this conversation continues here.`];
  if (standing.lastAsked !== null) lines.push(`Last asked: "${quote(standing.lastAsked)}"`);
  if (standing.lastAnswer !== null) lines.push(`Last answer: "${quote(standing.lastAnswer)}"`);
  if (standing.todosOpen + standing.todosDone > 0) lines.push(`Todo: ${standing.todosOpen} open, ${standing.todosDone} done.`);
  if (standing.running) lines.push('A turn is still running; its answer will arrive here.');
  if (standing.waiting) lines.push('A question or an approval is waiting for an answer here.');
  if (standing.lastAsked === null) lines.push('Nothing has been asked yet.');
  lines.push('Reply here to carry on.');
  return lines.join('\n');
}
