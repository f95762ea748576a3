import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import { ALLOWED_VALUES } from '@herald/db';
import type { Database, QueueMode } from '@herald/db';
import { mayAnswerWait, NOT_YOURS_REPLY } from '@herald/waits';
import type { BudgetDefaults } from '@herald/core';
import { runHandoffCommand } from '@herald/handoff';
import { usageReply } from '@herald/limits';

export const NEW_SESSION_REPLY = 'Started a new session. Earlier messages in this chat are no longer in context.';

export const COMPRESS_WHILE_WAITING_REPLY = 'A question or an approval is waiting for your answer: answer it (or send /stop) first, then /compress.';

export const QUEUE_MODES = ALLOWED_VALUES['sessions.queue_mode'];

/** What a message asks of the running session, beyond being queued. */
export type SessionControl = 'stop' | 'interrupt';

export type Command =
  | { kind: 'new' }
  | { kind: 'queue'; mode: string | undefined }
  | { kind: 'stop' }
  | { kind: 'approve'; scope: 'once' | 'session' }
  | { kind: 'deny'; reason: string | undefined }
  | { kind: 'status' }
  | { kind: 'compress'; focus: string | undefined }
  | { kind: 'sethome' }
  | { kind: 'handoff'; platform: string | undefined }
  | { kind: 'usage' }
  | { kind: 'help' };

/** The chat commands, the same on every platform; Discord registers them as slash commands. */
export const CHAT_COMMANDS = [
  { name: 'new', description: 'Start a new session in this chat' },
  { name: 'reset', description: 'Same as /new' },
  { name: 'status', description: "Show this chat's session, queue mode and what is running" },
  { name: 'stop', description: 'Stop the running turn' },
  { name: 'queue', description: 'Show or set how messages sent mid-turn are handled', argument: 'mode' },
  { name: 'approve', description: 'Approve the pending tool call; /approve session allows it for the rest of the session', argument: 'scope' },
  { name: 'deny', description: 'Deny the pending tool call, with an optional reason', argument: 'reason' },
  { name: 'compress', description: 'Compress this conversation into a summary and carry on in a new session', argument: 'focus' },
  { name: 'sethome', description: 'Make this chat the home chat of this platform: where /handoff sends a conversation' },
  { name: 'handoff', description: "Move this conversation to a platform's home chat and carry on there", argument: 'platform' },
  { name: 'link', description: 'Link this account to your Herald person with a code from herald people link-code', argument: 'code' },
  { name: 'usage', description: 'Show your model usage and cost today and this month' },
  { name: 'help', description: 'List the commands' },
] as const;

export const HELP_REPLY = [
  'Commands:',
  ...CHAT_COMMANDS.map((command) => `/${command.name}${'argument' in command ? ` <${command.argument}>` : ''} - ${command.description}`),
  `Queue modes: ${QUEUE_MODES.join(', ')}.`,
].join('\n');

/** Chat commands handled where the message arrives; everything else is a message for the agent. */
export function parseCommand(text: string): Command | undefined {
  const match = /^\/([a-z]+)(?:@\S+)?(?:\s+(.*))?$/is.exec(text.trim());
  if (!match) return undefined;
  const name = match[1]?.toLowerCase();
  const argument = match[2]?.trim();
  if (name === 'new' || name === 'reset') return { kind: 'new' };
  if (name === 'queue') return { kind: 'queue', mode: argument === '' ? undefined : argument?.toLowerCase() };
  if (name === 'stop') return { kind: 'stop' };
  if (name === 'approve') return { kind: 'approve', scope: argument?.toLowerCase() === 'session' ? 'session' : 'once' };
  if (name === 'deny') return { kind: 'deny', reason: argument === '' ? undefined : argument };
  if (name === 'status') return { kind: 'status' };
  if (name === 'compress') return { kind: 'compress', focus: argument === '' ? undefined : argument };
  if (name === 'sethome') return { kind: 'sethome' };
  if (name === 'handoff') return { kind: 'handoff', platform: argument === '' ? undefined : argument?.toLowerCase() };
  if (name === 'usage') return { kind: 'usage' };
  if (name === 'help' || name === 'start') return { kind: 'help' };
  return undefined;
}

/** Bare replies that answer a pending approval, as Hermes accepts them; only then are they commands. */
export function bareApprovalWord(text: string): 'approve' | 'deny' | undefined {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, '');
  if (['yes', 'y', 'approve', 'approved', 'ok', 'go ahead'].includes(word)) return 'approve';
  if (['no', 'n', 'deny', 'denied', 'stop'].includes(word)) return 'deny';
  return undefined;
}

async function runApprovalCommand(
  trx: Transaction<Database>,
  sessionId: string,
  userId: string,
  operators: readonly string[],
  command: Extract<Command, { kind: 'approve' | 'deny' }>,
): Promise<CommandOutcome> {
  const wait = await trx
    .selectFrom('tool_waits')
    .select(['id', 'prompt'])
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .where('kind', '=', 'approval')
    .orderBy('created_at')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
  if (!wait) return { reply: 'Nothing is waiting for approval.' };
  // In a group chat anyone may type /approve; only the person whose turn asked (or an operator)
  // decides. The wait stays pending for them.
  if (!(await mayAnswerWait(trx, wait.id, userId, operators))) return { reply: NOT_YOURS_REPLY };
  const approved = command.kind === 'approve';
  await sql`SELECT herald_resolve_wait(${wait.id}::uuid, ${approved ? 'approved' : 'denied'}, ${
    command.kind === 'deny' ? (command.reason ?? null) : null
  }::text, ${userId}, ${approved && command.scope === 'session'})`.execute(trx);
  // A prompt that is already a sentence ("... (recursive delete).") gets no second period.
  const what = /[.!?]$/.test(wait.prompt) ? wait.prompt : `${wait.prompt}.`;
  const reply = approved ? (command.scope === 'session' ? `Approved, and allowed for the rest of this session: ${what}` : `Approved: ${what}`) : `Denied: ${what}`;
  return { reply, wake: true };
}

export interface CommandOutcome {
  reply: string;
  control?: SessionControl;
  /** The command made a parked turn runnable: the session needs a worker. */
  wake?: boolean;
}

async function runQueueCommand(trx: Transaction<Database>, sessionId: string, mode: string | undefined): Promise<CommandOutcome> {
  if (mode === undefined) {
    const row = await trx.selectFrom('sessions').select('queue_mode').where('id', '=', sessionId).executeTakeFirstOrThrow();
    return { reply: `Queue mode is ${row.queue_mode}. Change it with /queue ${QUEUE_MODES.join('|')}.` };
  }
  if (!(QUEUE_MODES as readonly string[]).includes(mode)) {
    return { reply: `Unknown queue mode '${mode}'. Use one of: ${QUEUE_MODES.join(', ')}.` };
  }
  await trx
    .updateTable('sessions')
    .set({ queue_mode: mode as QueueMode })
    .where('id', '=', sessionId)
    .execute();
  return { reply: `Queue mode set to ${mode}.` };
}

async function runStopCommand(trx: Transaction<Database>, sessionId: string, userId: string, operators: readonly string[]): Promise<CommandOutcome> {
  // A turn parked on the person holds no worker to abort: /stop answers its question for it, so
  // the turn ends (denied, or unanswered) instead of waiting out the timeout.
  const parked = await trx.selectFrom('tool_waits').select(['id', 'kind']).where('session_id', '=', sessionId).where('status', '=', 'pending').forUpdate().execute();
  if (parked.length > 0) {
    // Withdrawing someone else's request is answering it: the same rule as /deny.
    for (const wait of parked) {
      if (!(await mayAnswerWait(trx, wait.id, userId, operators))) return { reply: NOT_YOURS_REPLY };
    }
    for (const wait of parked) {
      await sql`SELECT herald_resolve_wait(${wait.id}::uuid, ${wait.kind === 'approval' ? 'denied' : 'expired'}, ${'stopped with /stop'}::text, ${userId}, false)`.execute(trx);
    }
    return { reply: 'Stopped: the pending request is withdrawn.', wake: true };
  }
  const running = await trx.selectFrom('inbound_events').select('id').where('session_id', '=', sessionId).where('status', '=', 'processing').limit(1).executeTakeFirst();
  if (!running) return { reply: 'Nothing is running.' };
  return { reply: 'Stopping the running turn.', control: 'stop' };
}

async function runStatusCommand(trx: Transaction<Database>, sessionId: string): Promise<CommandOutcome> {
  const session = await trx.selectFrom('sessions').select(['queue_mode', 'created_at']).where('id', '=', sessionId).executeTakeFirstOrThrow();
  const open = await trx
    .selectFrom('inbound_events')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['pending', 'processing'])
    .groupBy('status')
    .execute();
  const count = (status: string) => Number(open.find((row) => row.status === status)?.count ?? 0);
  const turns = await trx
    .selectFrom('turns')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return {
    reply: [
      `Session ${sessionId}, started ${session.created_at.toISOString()}.`,
      `Queue mode: ${session.queue_mode}. Turns so far: ${Number(turns.count)}.`,
      count('processing') > 0 ? 'A turn is running.' : 'Nothing is running.',
      `Messages waiting: ${count('pending')}.`,
    ].join('\n'),
  };
}

/** /usage: the person's own usage, whatever chat they ask in; the budgets of this chat's profile. */
async function runUsageCommand(trx: Transaction<Database>, sessionId: string, userId: string, budgets: BudgetDefaults | undefined): Promise<CommandOutcome> {
  const session = await trx.selectFrom('sessions').select('profile_id').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return { reply: await usageReply(trx, userId, session.profile_id, budgets) };
}

/** Runs a chat command in the caller's transaction (the one that stores it as an event). */
export async function runCommand(trx: Transaction<Database>, sessionId: string, userId: string, operators: readonly string[], command: Command, budgets?: BudgetDefaults): Promise<CommandOutcome> {
  if (command.kind === 'new') return { reply: NEW_SESSION_REPLY };
  if (command.kind === 'usage') return runUsageCommand(trx, sessionId, userId, budgets);
  if (command.kind === 'queue') return runQueueCommand(trx, sessionId, command.mode);
  if (command.kind === 'approve' || command.kind === 'deny') return runApprovalCommand(trx, sessionId, userId, operators, command);
  if (command.kind === 'status') return runStatusCommand(trx, sessionId);
  if (command.kind === 'help') return { reply: HELP_REPLY };
  if (command.kind === 'sethome' || command.kind === 'handoff') return runHandoffCommand(trx, sessionId, userId, operators, command);
  // /compress reaches here only while a question or approval waits; otherwise the worker runs it.
  if (command.kind === 'compress') return { reply: COMPRESS_WHILE_WAITING_REPLY };
  return runStopCommand(trx, sessionId, userId, operators);
}

/** The /compress command an open event holds, if it is one (the worker runs it instead of a turn). */
export function compressCommandOf(text: string): { focus: string | undefined } | undefined {
  const command = parseCommand(text);
  return command?.kind === 'compress' ? { focus: command.focus } : undefined;
}
