import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { ALLOWED_VALUES } from '@herald/db';
import type { Database, QueueMode } from '@herald/db';
import { sessionKey } from './session-key.ts';
import type { RouteAddress } from './session-key.ts';
import { CHAT_PLATFORMS, enqueueOutbound } from '@herald/delivery';

export interface InboundMessage extends RouteAddress {
  userId: string;
  userName?: string | undefined;
  text: string;
  /** Platform event id or API idempotency key, already namespaced by the caller. */
  dedupeKey?: string | undefined;
  /** The platform's id of the message (Telegram message_id, Discord snowflake): replies quote it. */
  platformMessageId?: string | undefined;
  /** Extra delivery fields for the answer to this message (a Discord interaction's token). */
  replyVia?: Record<string, string> | undefined;
}

export interface AcceptedEvent {
  eventId: string;
  sessionId: string;
  /** True when this event was accepted before (a retried webhook or repeated API call). */
  duplicate: boolean;
  /** True when the session needs a worker: the caller enqueues a wake-up for it. */
  needsWake: boolean;
  /** A command answered on arrival: its reply is already stored on the event. */
  answered?: boolean;
  /** The session's wake generation, read under the session row lock: names the wake-up job. */
  wakeGeneration: string;
  /** Set when the running turn must be told at once (a /stop, or a message in interrupt mode). */
  control?: SessionControl;
}

export const COMPRESS_WHILE_WAITING_REPLY =
  'A question or an approval is waiting for your answer: answer it (or send /stop) first, then /compress.';

export const NEW_SESSION_REPLY = 'Started a new session. Earlier messages in this chat are no longer in context.';

async function routeToSession(
  trx: Transaction<Database>,
  key: string,
  message: InboundMessage,
  newSessionId: string,
): Promise<string> {
  const routed = await sql<{ session_id: string }>`
    SELECT herald_route_session(${key}, ${newSessionId}::uuid, ${message.profileId}, ${message.platform},
      ${message.chatType}, ${message.chatId}, ${message.threadId ?? null}::text, ${message.userId}) AS session_id`.execute(trx);
  const sessionId = routed.rows[0]?.session_id;
  if (!sessionId) throw new Error(`no session for ${key}`);
  return sessionId;
}

async function findByDedupeKey(db: Kysely<Database> | Transaction<Database>, dedupeKey: string) {
  return db
    .selectFrom('inbound_events')
    .innerJoin('sessions', 'sessions.id', 'inbound_events.session_id')
    .select(['inbound_events.id', 'inbound_events.session_id', 'inbound_events.status', 'sessions.wake_generation'])
    .where('inbound_events.dedupe_key', '=', dedupeKey)
    .executeTakeFirst();
}

function duplicateOf(row: NonNullable<Awaited<ReturnType<typeof findByDedupeKey>>>): AcceptedEvent {
  return {
    eventId: row.id,
    sessionId: row.session_id,
    duplicate: true,
    needsWake: row.status === 'pending' || row.status === 'processing',
    wakeGeneration: String(row.wake_generation),
  };
}

export const QUEUE_MODES = ALLOWED_VALUES['sessions.queue_mode'];

/** What a message asks of the running session, beyond being queued. */
export type SessionControl = 'stop' | 'interrupt';

/** The session already has this many unanswered messages; the caller refuses the new one. */
export class BacklogFullError extends Error {
  override readonly name = 'BacklogFullError';
  readonly limit: number;
  constructor(limit: number) {
    super(
      `This chat already has ${limit} messages waiting for an answer; wait for the replies or send /stop, then try again.`,
    );
    this.limit = limit;
  }
}

type Command =
  | { kind: 'new' }
  | { kind: 'queue'; mode: string | undefined }
  | { kind: 'stop' }
  | { kind: 'approve'; scope: 'once' | 'session' }
  | { kind: 'deny'; reason: string | undefined }
  | { kind: 'status' }
  | { kind: 'compress'; focus: string | undefined }
  | { kind: 'help' };

/** The chat commands, the same on every platform; Discord registers them as slash commands. */
export const CHAT_COMMANDS = [
  { name: 'new', description: 'Start a new session in this chat' },
  { name: 'reset', description: 'Same as /new' },
  { name: 'status', description: 'Show this chat\'s session, queue mode and what is running' },
  { name: 'stop', description: 'Stop the running turn' },
  { name: 'queue', description: 'Show or set how messages sent mid-turn are handled', argument: 'mode' },
  { name: 'approve', description: 'Approve the pending tool call; /approve session allows it for the rest of the session', argument: 'scope' },
  { name: 'deny', description: 'Deny the pending tool call, with an optional reason', argument: 'reason' },
  { name: 'compress', description: 'Compress this conversation into a summary and carry on in a new session', argument: 'focus' },
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
  if (name === 'help' || name === 'start') return { kind: 'help' };
  return undefined;
}

/** Bare replies that answer a pending approval, as Hermes accepts them; only then are they commands. */
export function bareApprovalWord(text: string): 'approve' | 'deny' | undefined {
  const word = text.trim().toLowerCase().replace(/[.!]+$/, '');
  if (['yes', 'y', 'approve', 'approved', 'ok', 'go ahead'].includes(word)) return 'approve';
  if (['no', 'n', 'deny', 'denied', 'stop'].includes(word)) return 'deny';
  return undefined;
}

async function runApprovalCommand(
  trx: Transaction<Database>,
  sessionId: string,
  userId: string,
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
  const approved = command.kind === 'approve';
  await sql`SELECT herald_resolve_wait(${wait.id}::uuid, ${approved ? 'approved' : 'denied'}, ${
    command.kind === 'deny' ? (command.reason ?? null) : null
  }::text, ${userId}, ${approved && command.scope === 'session'})`.execute(trx);
  const reply = approved
    ? command.scope === 'session'
      ? `Approved, and allowed for the rest of this session: ${wait.prompt}.`
      : `Approved: ${wait.prompt}.`
    : `Denied: ${wait.prompt}.`;
  return { reply, wake: true };
}

interface CommandOutcome {
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
  await trx.updateTable('sessions').set({ queue_mode: mode as QueueMode }).where('id', '=', sessionId).execute();
  return { reply: `Queue mode set to ${mode}.` };
}

async function runStopCommand(trx: Transaction<Database>, sessionId: string, userId: string): Promise<CommandOutcome> {
  // A turn parked on the person holds no worker to abort: /stop answers its question for it, so
  // the turn ends (denied, or unanswered) instead of waiting out the timeout.
  const parked = await trx
    .selectFrom('tool_waits')
    .select(['id', 'kind'])
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .forUpdate()
    .execute();
  if (parked.length > 0) {
    for (const wait of parked) {
      await sql`SELECT herald_resolve_wait(${wait.id}::uuid, ${wait.kind === 'approval' ? 'denied' : 'expired'}, ${'stopped with /stop'}::text, ${userId}, false)`.execute(trx);
    }
    return { reply: 'Stopped: the pending request is withdrawn.', wake: true };
  }
  const running = await trx
    .selectFrom('inbound_events')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('status', '=', 'processing')
    .limit(1)
    .executeTakeFirst();
  if (!running) return { reply: 'Nothing is running.' };
  return { reply: 'Stopping the running turn.', control: 'stop' };
}

async function runStatusCommand(trx: Transaction<Database>, sessionId: string): Promise<CommandOutcome> {
  const session = await trx
    .selectFrom('sessions')
    .select(['queue_mode', 'created_at'])
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();
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

export interface AcceptOptions {
  /** Most unanswered messages a session may hold; more are refused with BacklogFullError. */
  backlogLimit: number;
}

/**
 * Commits an inbound message to the session inbox. The caller enqueues the wake-up only after this
 * resolves, so a message is never in Redis without being in Postgres.
 *
 * The session row is locked while the event is inserted: a worker bumps `wake_generation` under the
 * same lock before it reads the inbox, so either it sees this event or we see its new generation and
 * enqueue a job it has not consumed. That closes the last-drain/lease-release race.
 */
export async function acceptInbound(
  db: Kysely<Database>,
  message: InboundMessage,
  options: AcceptOptions = { backlogLimit: 50 },
): Promise<AcceptedEvent> {
  const key = sessionKey(message);
  let command = parseCommand(message.text);
  const bare = command === undefined ? bareApprovalWord(message.text) : undefined;
  if (bare !== undefined && (await hasPendingWait(db, key, ['approval']))) {
    command = bare === 'approve' ? { kind: 'approve', scope: 'once' } : { kind: 'deny', reason: undefined };
  }
  if (command === undefined) return acceptMessage(db, key, message, options.backlogLimit);
  // Compressing needs the summariser and the session lease: the worker runs it, in order with the
  // session's other events, so it is queued like a message but kept out of any running turn.
  // With a question or approval pending the text would be taken as its answer: refused at once below.
  if (command.kind === 'compress' && !(await hasPendingWait(db, key, ['approval', 'clarify']))) return markCommand(db, await acceptMessage(db, key, message, options.backlogLimit));
  return acceptCommand(db, key, message, command);
}

async function hasPendingWait(db: Kysely<Database>, key: string, kinds: ('approval' | 'clarify')[]): Promise<boolean> {
  const row = await db
    .selectFrom('session_routes')
    .innerJoin('tool_waits', 'tool_waits.session_id', 'session_routes.session_id')
    .select('tool_waits.id')
    .where('session_routes.session_key', '=', key)
    .where('tool_waits.status', '=', 'pending')
    .where('tool_waits.kind', 'in', kinds)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A chat command: answered here, at once, in one transaction with its effect. Stored as an event
 * like any message so a retried delivery gets the same answer.
 */
async function acceptCommand(
  db: Kysely<Database>,
  key: string,
  message: InboundMessage,
  command: Command,
): Promise<AcceptedEvent> {
  if (message.dedupeKey !== undefined) {
    const seen = await findByDedupeKey(db, message.dedupeKey);
    if (seen) return duplicateOf(seen);
  }
  return db.transaction().execute(async (trx) => {
    if (command.kind === 'new') {
      // Point the route at a brand-new session; the old one stays, reachable by id, ended.
      const old = await trx.deleteFrom('session_routes').where('session_key', '=', key).returning('session_id').executeTakeFirst();
      if (old) {
        await trx.updateTable('sessions').set({ ended_at: new Date(), end_reason: 'new' })
          .where('id', '=', old.session_id).where('ended_at', 'is', null).execute();
      }
    }
    const sessionId = await routeToSession(trx, key, message, randomUUID());
    const locked = await trx
      .updateTable('sessions')
      .set({ updated_at: new Date() })
      .where('id', '=', sessionId)
      .returning(['wake_generation'])
      .executeTakeFirstOrThrow();
    let outcome: CommandOutcome;
    if (command.kind === 'new') outcome = { reply: NEW_SESSION_REPLY };
    else if (command.kind === 'queue') outcome = await runQueueCommand(trx, sessionId, command.mode);
    else if (command.kind === 'approve' || command.kind === 'deny') outcome = await runApprovalCommand(trx, sessionId, message.userId, command);
    else if (command.kind === 'status') outcome = await runStatusCommand(trx, sessionId);
    else if (command.kind === 'help') outcome = { reply: HELP_REPLY };
    else if (command.kind === 'compress') outcome = { reply: COMPRESS_WHILE_WAITING_REPLY };
    else outcome = await runStopCommand(trx, sessionId, message.userId);
    const eventId = randomUUID();
    const inserted = await trx
      .insertInto('inbound_events')
      .values({
        id: eventId,
        session_id: sessionId,
        dedupe_key: message.dedupeKey ?? null,
        platform: message.platform,
        user_id: message.userId,
        user_name: message.userName ?? null,
        text: message.text,
        kind: 'command',
        status: 'done',
        turn_id: null,
        reply_text: outcome.reply,
        error: null,
        completed_at: new Date(),
        platform_message_id: message.platformMessageId ?? null,
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) {
      // The same dedupe key committed concurrently; it already holds the truth.
      const seen = await findByDedupeKey(trx, message.dedupeKey ?? '');
      if (!seen) throw new Error('dedupe conflict without a stored event');
      throw new DuplicateRace(duplicateOf(seen));
    }
    if ((CHAT_PLATFORMS as readonly string[]).includes(message.platform)) {
      // The answer goes out through the outbox, committed with the command's effect.
      await enqueueOutbound(trx, {
        idempotencyKey: `command:${eventId}`,
        platform: message.platform,
        target: chatTarget(message),
        text: outcome.reply,
        sessionId,
        source: 'command',
      });
    }
    return {
      eventId,
      sessionId,
      duplicate: false,
      needsWake: outcome.wake === true,
      answered: true,
      wakeGeneration: String(locked.wake_generation),
      ...(outcome.control === undefined ? {} : { control: outcome.control }),
    };
  }).catch((error: unknown) => {
    // Rolled back our route/session work; report the event that won.
    if (error instanceof DuplicateRace) return error.accepted;
    throw error;
  });
}

/** A plain message: one call of herald_accept_message (routing, lock, backlog, insert). */
async function acceptMessage(
  db: Kysely<Database>,
  key: string,
  message: InboundMessage,
  backlogLimit: number,
): Promise<AcceptedEvent> {
  const result = await sql<{
    event_id: string | null;
    session_id: string;
    outcome: 'accepted' | 'duplicate' | 'backlog_full';
    status: string | null;
    wake_generation: string;
    queue_mode: QueueMode;
  }>`SELECT * FROM herald_accept_message(${randomUUID()}::uuid, ${randomUUID()}::uuid, ${key}, ${message.profileId},
       ${message.platform}, ${message.chatType}, ${message.chatId}, ${message.threadId ?? null}::text, ${message.userId},
       ${message.userName ?? null}::text, ${message.text}, ${message.dedupeKey ?? null}::text, ${backlogLimit}::integer)`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('herald_accept_message returned nothing');
  if (row.outcome === 'backlog_full') throw new BacklogFullError(backlogLimit);
  if (row.outcome === 'accepted' && row.event_id !== null && message.platformMessageId !== undefined) {
    // Before the caller enqueues the wake-up, so the turn's reply finds it. Only the reply's
    // quoting and the reconciling of an ambiguous send use it; a crash right here costs neither.
    await db
      .updateTable('inbound_events')
      .set({ platform_message_id: message.platformMessageId })
      .where('id', '=', row.event_id)
      .execute();
  }
  const duplicate = row.outcome === 'duplicate';
  return {
    eventId: row.event_id ?? '',
    sessionId: row.session_id,
    duplicate,
    needsWake: !duplicate || row.status === 'pending' || row.status === 'processing',
    wakeGeneration: String(row.wake_generation),
    ...(!duplicate && row.queue_mode === 'interrupt' ? { control: 'interrupt' as const } : {}),
  };
}

async function markCommand(db: Kysely<Database>, accepted: AcceptedEvent): Promise<AcceptedEvent> {
  if (!accepted.duplicate) await db.updateTable('inbound_events').set({ kind: 'command' }).where('id', '=', accepted.eventId).execute();
  return accepted;
}

/** The /compress command an open event holds, if it is one (the worker runs it instead of a turn). */
export function compressCommandOf(text: string): { focus: string | undefined } | undefined {
  const command = parseCommand(text);
  return command?.kind === 'compress' ? { focus: command.focus } : undefined;
}

/** Where a chat platform delivers a reply to this message (the same shape herald_finish_turn builds). */
export function chatTarget(message: InboundMessage): Record<string, string> {
  return {
    chatId: message.chatId,
    chatType: message.chatType,
    ...(message.threadId === undefined || message.threadId === '' ? {} : { threadId: message.threadId }),
    ...(message.platformMessageId === undefined ? {} : { replyTo: message.platformMessageId }),
    ...message.replyVia,
  };
}

class DuplicateRace extends Error {
  readonly accepted: AcceptedEvent;
  constructor(accepted: AcceptedEvent) {
    super('duplicate event');
    this.accepted = accepted;
  }
}

export interface EventWaiting {
  id: string;
  kind: 'approval' | 'clarify';
  tool: string;
  prompt: string;
  choices: string[] | null;
  expiresAt: Date;
}

export interface EventView {
  id: string;
  sessionId: string;
  status: string;
  replyText: string | null;
  error: string | null;
  /** Set while the event's turn is parked on a question or an approval for the person. */
  waiting: EventWaiting | null;
}

export async function getEvent(db: Kysely<Database>, eventId: string): Promise<EventView | undefined> {
  const row = await db
    .selectFrom('inbound_events as e')
    .leftJoin('tool_waits as w', (join) => join.onRef('w.turn_id', '=', 'e.turn_id').on('w.status', '=', 'pending'))
    .select([
      'e.id', 'e.session_id', 'e.status', 'e.reply_text', 'e.error',
      'w.id as wait_id', 'w.kind', 'w.tool_name', 'w.prompt', 'w.choices', 'w.expires_at',
    ])
    .where('e.id', '=', eventId)
    .executeTakeFirst();
  if (!row) return undefined;
  const waiting =
    row.wait_id !== null && row.kind !== null && row.tool_name !== null && row.prompt !== null && row.expires_at !== null
      ? { id: row.wait_id, kind: row.kind, tool: row.tool_name, prompt: row.prompt, choices: row.choices ?? null, expiresAt: row.expires_at }
      : null;
  return { id: row.id, sessionId: row.session_id, status: row.status, replyText: row.reply_text, error: row.error, waiting };
}

export interface PendingEvent {
  id: string;
  text: string;
  userId: string;
  userName: string | null;
  status: 'pending' | 'processing';
  turnId: string | null;
}

export interface Inbox {
  queueMode: QueueMode;
  events: PendingEvent[];
}

/** The session's queue mode and open events, in one round trip. */
export async function openInbox(db: Kysely<Database>, sessionId: string, limit = 100): Promise<Inbox> {
  const rows = await db
    .selectFrom('sessions')
    .leftJoin('inbound_events', (join) =>
      join
        .onRef('inbound_events.session_id', '=', 'sessions.id')
        .on('inbound_events.status', 'in', ['pending', 'processing']),
    )
    .select([
      'sessions.queue_mode',
      sql<boolean>`EXISTS (SELECT 1 FROM turns t WHERE t.session_id = sessions.id AND t.status = 'waiting')`.as('parked'),
      'inbound_events.id',
      'inbound_events.text',
      'inbound_events.user_id',
      'inbound_events.user_name',
      'inbound_events.status',
      'inbound_events.turn_id',
    ])
    .where('sessions.id', '=', sessionId)
    .orderBy('inbound_events.received_at')
    .orderBy('inbound_events.id')
    .limit(limit)
    .execute();
  const events: PendingEvent[] = [];
  // A turn parked on a person's answer holds the session: later messages wait behind it, in order.
  if (rows[0]?.parked === true) return { queueMode: rows[0].queue_mode, events };
  for (const row of rows) {
    if (row.id === null || row.text === null || row.user_id === null) continue;
    events.push({
      id: row.id,
      text: row.text,
      userId: row.user_id,
      userName: row.user_name,
      status: row.status as 'pending' | 'processing',
      turnId: row.turn_id,
    });
  }
  return { queueMode: rows[0]?.queue_mode ?? 'followup', events };
}
