import { DEFAULT_ACCOUNT, slackAppIdOf } from '@herald/core';
import type { SlackConfig } from '@herald/core';
import { isConnectionError } from '@herald/db';
import { chatRouteExists, failureReason, isDeadLetter, recordFailure } from '@herald/session';
import { mayAnswerWait, NOT_YOURS_REPLY } from '@herald/waits';
import { LogLevel, SocketModeClient } from '@slack/socket-mode';
import type { WebClient } from '@slack/web-api';
import { handleChatInbound, routedProfile } from '../chat-inbound.ts';
import type { ChatInbound, ChatInboundDependencies, ChatInboundOutcome } from '../chat-inbound.ts';
import { LeasedTask } from '../leased-task.ts';
import { buttonChatText } from '../wait-buttons.ts';
import { slackIncomingFiles } from './slack-files.ts';
import { isBlockActions, isEventEnvelope, slackCandidate, slackPerson } from './slack-events.ts';
import type { SlackBlockActions, SlackBotIdentity, SlackEventEnvelope } from './slack-events.ts';
import { SlackSender, slackWebClient } from './slack-sender.ts';

export type SlackEnvelopeKind = 'events_api' | 'interactive';
export type SlackOutcome = ChatInboundOutcome | 'ignored' | 'dead_letter' | 'not_yours';

export interface SlackIngressOptions extends Omit<ChatInboundDependencies, 'allowedUsers'> {
  config: SlackConfig;
  owner: string;
  /** Lease TTL of the Socket Mode connection. @default 30000 */
  leaseTtlMs?: number;
}

/**
 * Slack on the ingress: Events API requests and interactions handed over by the HTTP routes, and
 * Socket Mode held by one replica per app under a platform lease. Either way an event is committed
 * to the inbox before Slack hears back: the route answers after the commit, the socket acks the
 * envelope after it; a storage outage is thrown (a 503, or no ack), so Slack delivers it again.
 */
export class SlackIngress {
  readonly client: WebClient;
  readonly sender: SlackSender;
  readonly #options: SlackIngressOptions;
  #identity: Promise<SlackBotIdentity> | undefined;
  #socket: LeasedTask | undefined;
  #connections = 0;

  constructor(options: SlackIngressOptions) {
    this.#options = options;
    this.client = slackWebClient(options.config);
    this.sender = new SlackSender(this.client, options.account ?? DEFAULT_ACCOUNT);
  }

  /** How many times this process opened the socket (tests: reconnects and the single holder). */
  get socketConnections(): number {
    return this.#connections;
  }

  /**
   * auth.test once: the bot's user id (mentions, its own messages) and its workspace. Slack being
   * unreachable is not the event's fault: it is thrown as SlackUnavailableError, so the event is
   * delivered again later instead of counting towards a dead letter.
   */
  identity(): Promise<SlackBotIdentity> {
    this.#identity ??= this.client.auth.test().then(
      (me) => ({ userId: me.user_id ?? '', botId: me.bot_id, teamId: me.team_id ?? '' }),
      (error: unknown) => {
        this.#identity = undefined;
        throw new SlackUnavailableError('auth.test failed; Slack will deliver the event again', { cause: error });
      },
    );
    return this.#identity;
  }

  /**
   * One envelope from either way in. A storage outage is thrown (Slack retries). Any other failure
   * is the event's own: tried once more, and failing the same way twice (three tries at most) it
   * becomes a dead letter with the reason, and Slack gets its answer so that it stops retrying.
   */
  async handle(kind: SlackEnvelopeKind, body: unknown): Promise<SlackOutcome> {
    const key = envelopeKey(kind, body, this.#options.account ?? DEFAULT_ACCOUNT);
    if (key === undefined) return 'ignored';
    const { db, logger } = this.#options;
    if (await isDeadLetter(db, 'slack_event', key)) return 'dead_letter';
    for (let attempt = 1; ; attempt++) {
      try {
        return kind === 'events_api' ? await this.#event(body as SlackEventEnvelope) : await this.#button(body as SlackBlockActions);
      } catch (error) {
        if (isConnectionError(error) || error instanceof SlackUnavailableError) throw error;
        const reason = failureReason(error);
        const strike = await recordFailure(db, { source: 'slack_event', key, reason, payload: body }, attempt >= 3);
        logger.warn({ err: error, key, attempt }, 'slack event failed');
        if (strike.dead) {
          logger.error({ key, reason }, 'slack event dead-lettered; intake goes on');
          return 'dead_letter';
        }
      }
    }
  }

  async #event(envelope: SlackEventEnvelope): Promise<SlackOutcome> {
    const bot = botOfEnvelope(envelope) ?? (await this.identity());
    const candidate = slackCandidate(envelope, bot);
    if (!candidate) return 'ignored';
    const { inbound } = candidate;
    const { allowedChannels } = this.#options.config;
    if (inbound.chatType === 'group' && allowedChannels.length > 0 && !allowedChannels.includes(inbound.chatId)) return 'ignored';
    // A reply in a thread without a mention is for the bot only in a thread it is part of.
    if (!candidate.addressed && !(inbound.threadId !== undefined && (await this.#inSession(inbound)))) return 'ignored';
    const files = slackIncomingFiles(envelope.event.files, this.#options.config);
    const outcome = await this.#commit(files.length === 0 ? inbound : { ...inbound, files });
    if (outcome === 'accepted') void this.sender.startWorking(inbound.chatId, inbound.platformMessageId);
    return outcome;
  }

  /** Whether the thread is a session of this app and of the profile the channel's binding routes it to. */
  async #inSession(inbound: ChatInbound): Promise<boolean> {
    return chatRouteExists(this.#options.db, {
      profileId: await routedProfile(this.#options, inbound),
      platform: inbound.platform,
      account: this.#options.account,
      chatType: inbound.chatType,
      chatId: inbound.chatId,
      threadId: inbound.threadId,
    });
  }

  /**
   * A button under an approval or a question: the chat message its presser could have typed, if
   * they may answer that wait (the person who asked, or an operator); anyone else gets a refusal
   * only they see, and nothing is committed.
   */
  async #button(payload: SlackBlockActions): Promise<SlackOutcome> {
    const action = payload.actions[0];
    const channel = payload.channel?.id ?? payload.container?.channel_id;
    const messageTs = payload.container?.message_ts ?? payload.message?.ts;
    if (!action?.value || channel === undefined || messageTs === undefined) return 'ignored';
    const text = await buttonChatText(this.#options.db, action.value);
    if (text === undefined) return 'ignored';
    const bot = await this.identity();
    const team = payload.user.team_id ?? payload.team?.id ?? bot.teamId;
    const person = slackPerson(team, payload.user.id);
    const threadTs = payload.container?.thread_ts ?? payload.message?.thread_ts;
    const waitId = action.value.split(':')[1] ?? '';
    if (!(await mayAnswerWait(this.#options.db, waitId, `slack:${person.userId}`, this.#options.accept.operators ?? []))) {
      await this.sender.ephemeral(channel, payload.user.id, NOT_YOURS_REPLY, threadTs).catch((error: unknown) => this.#options.logger.warn({ err: error }, 'slack ephemeral refusal failed'));
      return 'not_yours';
    }
    const dm = channel.startsWith('D');
    return this.#commit({
      platform: 'slack',
      chatType: dm ? 'dm' : 'group',
      chatId: channel,
      threadId: dm ? undefined : threadTs,
      ...person,
      userName: payload.user.username ?? payload.user.name,
      text,
      dedupeKey: `slack:${team}:action:${messageTs}:${action.action_ts ?? action.value}`,
      platformMessageId: messageTs,
    });
  }

  #commit(inbound: ChatInbound): Promise<ChatInboundOutcome> {
    return handleChatInbound({ ...this.#options, allowedUsers: this.#options.config.allowedUsers }, inbound);
  }

  /** Socket Mode: one connection per Slack app across all replicas, whoever holds the lease. */
  startSocketMode(appToken: string): LeasedTask {
    this.#socket ??= new LeasedTask({
      db: this.#options.db,
      name: `slack-socket:${slackAppIdOf(appToken)}`,
      owner: this.#options.owner,
      ttlMs: this.#options.leaseTtlMs ?? 30_000,
      logger: this.#options.logger,
      run: (signal) => this.#connect(appToken, signal),
    });
    this.#socket.start();
    return this.#socket;
  }

  async stop(): Promise<void> {
    await this.#socket?.stop();
  }

  /**
   * Holds the socket until the lease is lost or the process stops. The client reconnects by itself
   * on a `disconnect` envelope (Slack recycling the connection) and on a dropped socket, asking
   * apps.connections.open for a fresh URL each time.
   */
  async #connect(appToken: string, signal: AbortSignal): Promise<void> {
    const { config, logger } = this.#options;
    const socket = new SocketModeClient({ appToken, clientOptions: { slackApiUrl: config.apiUrl }, logLevel: LogLevel.ERROR, autoReconnectEnabled: true });
    socket.on('connected', () => {
      this.#connections += 1;
      logger.info({ connections: this.#connections }, 'slack socket mode connected');
    });
    socket.on('slack_event', (delivery: { ack: () => Promise<void>; type: string; body: unknown }) => {
      if (delivery.type === 'events_api' || delivery.type === 'interactive') void this.#envelope(delivery.type, delivery.body, delivery.ack);
    });
    try {
      await socket.start();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    } finally {
      await socket.disconnect().catch(() => undefined);
    }
  }

  /** Acks only after the commit: an envelope left unacked (storage down) is delivered again by Slack. */
  async #envelope(kind: SlackEnvelopeKind, body: unknown, ack: () => Promise<void>): Promise<void> {
    try {
      await this.handle(kind, body);
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'slack envelope not committed; left unacknowledged for Slack to deliver again');
      return;
    }
    await ack().catch((error: unknown) => this.#options.logger.warn({ err: error }, 'slack ack failed'));
  }
}

/** Slack itself cannot be asked right now: like a storage outage, the event is left for Slack to deliver again. */
export class SlackUnavailableError extends Error {
  override readonly name = 'SlackUnavailableError';
}

/** The bot as the envelope names it (`authorizations`): no auth.test needed for most events. */
function botOfEnvelope(envelope: SlackEventEnvelope): SlackBotIdentity | undefined {
  const authorization = envelope.authorizations?.find((entry) => entry.is_bot === true) ?? envelope.authorizations?.[0];
  if (authorization?.user_id === undefined) return undefined;
  return { userId: authorization.user_id, botId: undefined, teamId: authorization.team_id ?? envelope.team_id ?? '' };
}

/**
 * The dead-letter key of an envelope: its event id, or the button press; undefined for what Herald
 * does not read. A named app's keys are its own (`slack@ops:`): one message seen by two apps in a
 * channel is two events, and one failing must not dead-letter the other.
 */
function envelopeKey(kind: SlackEnvelopeKind, body: unknown, account: string): string | undefined {
  const prefix = account === DEFAULT_ACCOUNT ? 'slack' : `slack@${account}`;
  if (kind === 'events_api') {
    if (!isEventEnvelope(body)) return undefined;
    return `${prefix}:${body.team_id ?? ''}:${body.event_id ?? `${body.event.channel ?? ''}:${body.event.ts ?? ''}`}`;
  }
  if (!isBlockActions(body)) return undefined;
  return `${prefix}:action:${body.user.id}:${body.actions[0]?.action_ts ?? ''}:${body.actions[0]?.value ?? ''}`;
}
