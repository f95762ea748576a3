import type { ChatInbound } from '../chat-inbound.ts';
import type { SlackFile } from './slack-files.ts';
import { slackTextToPlain } from './slack-format.ts';

/** The bot as Slack knows it (auth.test): its user id is how people mention it. */
export interface SlackBotIdentity {
  userId: string;
  botId: string | undefined;
  teamId: string;
}

/** The part of a message or app_mention event Herald reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  team?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  /** Files shared with the message (subtype file_share). */
  files?: SlackFile[];
}

/** An Events API envelope (`event_callback`), as the HTTP route and Socket Mode's events_api carry it. */
export interface SlackEventEnvelope {
  type: 'event_callback';
  team_id?: string;
  event_id?: string;
  /** Who the event is for: the bot's user id among them (Slack sends it with every event). */
  authorizations?: { user_id?: string; team_id?: string; is_bot?: boolean }[];
  event: SlackMessageEvent;
}

export function isEventEnvelope(body: unknown): body is SlackEventEnvelope {
  if (typeof body !== 'object' || body === null) return false;
  const envelope = body as { type?: unknown; event?: unknown };
  return envelope.type === 'event_callback' && typeof envelope.event === 'object' && envelope.event !== null && typeof (envelope.event as { type?: unknown }).type === 'string';
}

/**
 * Subtypes that are a person writing: a file with a caption, a thread reply also sent to the
 * channel. Every other subtype (message_changed, message_deleted, bot_message, channel_join...) is
 * not a new message from a person and starts no turn.
 */
const PERSON_SUBTYPES = new Set(['file_share', 'thread_broadcast']);

/** A Slack message as a candidate chat message, and whether it names the bot (a mention). */
export interface SlackCandidate {
  inbound: ChatInbound;
  /** Mentioned, or a DM: addressed to the bot without looking further. */
  addressed: boolean;
}

/**
 * A message event as the chat message it would be, or undefined when it is no one's message to
 * answer: the bot's own and other bots' messages, edits, deletions, empty text without files. In channels the
 * session is the thread (channel + thread_ts); a top-level mention starts one under its own ts.
 * Whether a thread reply without a mention is in a thread the bot is part of is the caller's check.
 */
export function slackCandidate(envelope: SlackEventEnvelope, bot: SlackBotIdentity): SlackCandidate | undefined {
  const event = envelope.event;
  if (event.type !== 'message' && event.type !== 'app_mention') return undefined;
  if (event.subtype !== undefined && !PERSON_SUBTYPES.has(event.subtype)) return undefined;
  if (event.bot_id !== undefined || event.user === undefined || event.user === bot.userId) return undefined;
  if (event.channel === undefined || event.ts === undefined) return undefined;
  const text = slackTextToPlain(event.text ?? '', bot.userId);
  if (text === '' && !(Array.isArray(event.files) && event.files.length > 0)) return undefined;
  const team = event.team ?? envelope.team_id ?? bot.teamId;
  const dm = event.channel_type === 'im' || event.channel.startsWith('D');
  const mentioned = event.type === 'app_mention' || (event.text ?? '').includes(`<@${bot.userId}`);
  return {
    addressed: dm || mentioned,
    inbound: {
      platform: 'slack',
      chatType: dm ? 'dm' : 'group',
      chatId: event.channel,
      threadId: dm ? undefined : (event.thread_ts ?? (mentioned ? event.ts : undefined)),
      ...slackPerson(team, event.user),
      text,
      // Per message, not per event: a mention arrives as both `message` and `app_mention` (two
      // event ids), and a retry repeats one of them; either way it is one message to answer.
      dedupeKey: `slack:${team}:${event.channel}:${event.ts}`,
      platformMessageId: event.ts,
    },
  };
}

/** A person: `slack:<team>:<user>` once qualified; the allowlist may name them by the bare user id. */
export function slackPerson(team: string, user: string): Pick<ChatInbound, 'userId' | 'allowlistIds'> {
  return { userId: `${team}:${user}`, allowlistIds: [user] };
}

/** A Block Kit button press (block_actions), the part Herald reads. */
export interface SlackBlockActions {
  type: 'block_actions';
  user: { id: string; team_id?: string; username?: string; name?: string };
  team?: { id: string } | null;
  channel?: { id: string };
  container?: { channel_id?: string; message_ts?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions: { action_id?: string; value?: string; action_ts?: string }[];
}

export function isBlockActions(body: unknown): body is SlackBlockActions {
  if (typeof body !== 'object' || body === null) return false;
  const payload = body as { type?: unknown; user?: { id?: unknown }; actions?: unknown };
  return payload.type === 'block_actions' && typeof payload.user?.id === 'string' && Array.isArray(payload.actions);
}
