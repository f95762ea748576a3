import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, QueueMode } from './schema.ts';
import { sessionKey } from './session-key.ts';
import type { RouteAddress } from './session-key.ts';
import { CHAT_PLATFORMS, enqueueOutbound } from './outbox.ts';

export interface InboundMessage extends RouteAddress {
  userId: string;
  userName?: string | undefined;
  text: string;
  /** Platform event id or API idempotency key, already namespaced by the caller. */
  dedupeKey?: string | undefined;
  /** The platform's id of the message (Telegram message_id, Discord snowflake): replies quote it. */
  platformMessageId?: string | undefined;
}

export interface AcceptedEvent {
  eventId: string;
  sessionId: string;
  /** True when this event was accepted before (a retried webhook or repeated API call). */
  duplicate: boolean;
  /** True when the event still needs a worker: the caller enqueues a wake-up for it. */
  needsWake: boolean;
  /** The session's wake generation, read under the session row lock: names the wake-up job. */
  wakeGeneration: string;
  /** Set when the running turn must be told at once (a /stop, or a message in interrupt mode). */
  control?: SessionControl;
}

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

export const QUEUE_MODES = ['followup', 'collect', 'steer', 'interrupt'] as const;

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
  | { kind: 'status' }
  | { kind: 'help' };

/** The chat commands, the same on every platform; Discord registers them as slash commands. */
export const CHAT_COMMANDS = [
  { name: 'new', description: 'Start a new session in this chat' },
  { name: 'reset', description: 'Same as /new' },
  { name: 'status', description: 'Show this chat\'s session, queue mode and what is running' },
  { name: 'stop', description: 'Stop the running turn' },
  { name: 'queue', description: 'Show or set how messages sent mid-turn are handled', argument: 'mode' },
  { name: 'help', description: 'List the commands' },
  // /approve and /deny (tool approvals) belong here once approvals land (issue 6).
] as const;

export const HELP_REPLY = [
  'Commands:',
  ...CHAT_COMMANDS.map((command) => `/${command.name}${'argument' in command ? ` <${command.argument}>` : ''} - ${command.description}`),
  `Queue modes: ${['followup', 'collect', 'steer', 'interrupt'].join(', ')}.`,
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
  if (name === 'status') return { kind: 'status' };
  if (name === 'help' || name === 'start') return { kind: 'help' };
  // /approve and /deny: parsed here once tool approvals exist (issue 6); until then they reach the agent.
  return undefined;
}

interface CommandOutcome {
  reply: string;
  control?: SessionControl;
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

async function runStopCommand(trx: Transaction<Database>, sessionId: string): Promise<CommandOutcome> {
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
  const command = parseCommand(message.text);
  if (command === undefined) return acceptMessage(db, key, message, options.backlogLimit);
  return acceptCommand(db, key, message, command);
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
      // Point the route at a brand-new session; the old one stays, reachable by id.
      await trx.deleteFrom('session_routes').where('session_key', '=', key).execute();
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
    else if (command.kind === 'status') outcome = await runStatusCommand(trx, sessionId);
    else if (command.kind === 'help') outcome = { reply: HELP_REPLY };
    else outcome = await runStopCommand(trx, sessionId);
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
      needsWake: false,
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

/** Where a chat platform delivers a reply to this message (the same shape herald_finish_turn builds). */
export function chatTarget(message: InboundMessage): Record<string, string> {
  return {
    chatId: message.chatId,
    chatType: message.chatType,
    ...(message.threadId === undefined || message.threadId === '' ? {} : { threadId: message.threadId }),
    ...(message.platformMessageId === undefined ? {} : { replyTo: message.platformMessageId }),
  };
}

class DuplicateRace extends Error {
  readonly accepted: AcceptedEvent;
  constructor(accepted: AcceptedEvent) {
    super('duplicate event');
    this.accepted = accepted;
  }
}

export interface EventView {
  id: string;
  sessionId: string;
  status: string;
  replyText: string | null;
  error: string | null;
}

export async function getEvent(db: Kysely<Database>, eventId: string): Promise<EventView | undefined> {
  const row = await db
    .selectFrom('inbound_events')
    .select(['id', 'session_id', 'status', 'reply_text', 'error'])
    .where('id', '=', eventId)
    .executeTakeFirst();
  if (!row) return undefined;
  return { id: row.id, sessionId: row.session_id, status: row.status, replyText: row.reply_text, error: row.error };
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
