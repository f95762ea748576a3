import { backoffMs, DEFAULT_ACCOUNT } from '@herald/core';
import type { SlackConfig } from '@herald/core';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryReceipt, DraftCalls, OutboundDelivery, OutboundFile, OutboundSender } from '@herald/delivery';
import { ErrorCode, LogLevel, WebClient } from '@slack/web-api';
import { splitMarkdown } from '../markdown-split.ts';
import { parseWaitButtons } from '../wait-buttons.ts';
import { escapeSlack, markdownToSlackMrkdwn } from './slack-format.ts';
import { SlackRateGate } from './slack-rate-gate.ts';

/**
 * Markdown per message part. Slack accepts far longer text, but a section block (the part that
 * carries buttons) holds 3,000 characters and mrkdwn escapes lengthen the text a little.
 */
export const SLACK_LIMIT = 2800;

/** The reaction shown on a person's message while its turn runs; removed once the answer is posted. */
export const WORKING_REACTION = 'hourglass_flowing_sand';

/** The metadata type of Herald's posts: the outbox row and part a message is. */
const OUTBOX_EVENT_TYPE = 'herald_outbox_part';

/** A message that is no longer there (deleted by someone): an update or delete of it has nothing to do. */
function isGone(error: unknown): boolean {
  const cause = (error as { cause?: { data?: { error?: string } } }).cause;
  return cause?.data?.error === 'message_not_found';
}

/** Slack errors that are Slack's own trouble, not the request's: worth another try. */
const TRANSIENT_PLATFORM_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'ratelimited']);

/**
 * A failed Web API call, classified for the outbox. A 429 carries Slack's Retry-After. Slack being
 * unreachable or failing (connection refused, 5xx) is an outage: the row is parked with a growing
 * wait, which the outbox does not count against its attempts, and resumes when Slack is back.
 * A refusal (channel_not_found, not_in_channel, invalid_auth...) will not change: failed for good.
 */
export function classifySlackError(error: unknown, attempt: number): DeliveryError {
  const coded = error as { code?: string; retryAfter?: number; statusCode?: number; data?: { error?: string }; message?: string };
  const outage = { retryable: true, retryAfterMs: backoffMs(attempt, 1000, 60_000), cause: error };
  if (coded.code === ErrorCode.RateLimitedError) {
    return new DeliveryError('Slack rate limit (429)', { retryable: true, retryAfterMs: Math.max((coded.retryAfter ?? 1) * 1000, 1), cause: error });
  }
  if (coded.code === ErrorCode.PlatformError) {
    const reason = coded.data?.error ?? 'unknown_error';
    return TRANSIENT_PLATFORM_ERRORS.has(reason) ? new DeliveryError(`Slack: ${reason}`, outage) : new DeliveryError(`Slack refused: ${reason}`, { retryable: false, cause: error });
  }
  if (coded.code === ErrorCode.HTTPError) {
    return (coded.statusCode ?? 500) >= 500
      ? new DeliveryError(`Slack answered ${coded.statusCode}: outage, parked`, outage)
      : new DeliveryError(`Slack answered ${coded.statusCode}`, { retryable: false, cause: error });
  }
  // Refused or unresolved before anything was sent: not ambiguous. A timeout or a reset may have
  // posted the message: ambiguous, and the next attempt looks for it first.
  const cause = (error as { original?: { code?: string } }).original?.code;
  const neverSent = cause === 'ECONNREFUSED' || cause === 'ENOTFOUND' || cause === 'EAI_AGAIN';
  return new DeliveryError(`Slack unreachable: ${coded.message ?? String(error)}`, { ...outage, ambiguous: !neverSent });
}

/** The Web API client as Herald uses it: our outbox owns retries, so the client makes none and returns 429s. */
export function slackWebClient(config: Pick<SlackConfig, 'botToken' | 'apiUrl'>, timeoutMs = 15_000): WebClient {
  return new WebClient(config.botToken, { slackApiUrl: config.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, timeout: timeoutMs, logLevel: LogLevel.ERROR });
}

type SlackBlock = Record<string, unknown>;

/** A wait's buttons (approve, allow for session, deny, or a question's choices) as one actions block. */
export function slackButtonBlocks(text: string, raw: string | undefined): SlackBlock[] | undefined {
  const buttons = parseWaitButtons(raw).slice(0, 25);
  if (buttons.length === 0) return undefined;
  return [
    { type: 'section', text: { type: 'mrkdwn', text: text.slice(0, 3000) } },
    {
      type: 'actions',
      elements: buttons.map((button) => ({
        type: 'button',
        text: { type: 'plain_text', text: button.text.slice(0, 75) },
        action_id: button.data,
        value: button.data,
        ...(button.data.endsWith(':deny') ? { style: 'danger' } : button.data.endsWith(':once') ? { style: 'primary' } : {}),
      })),
    },
  ];
}

/**
 * Posts outbox rows to a channel, in the row's thread when it has one (a channel session is a
 * thread). Each part's ts is recorded as it lands, so a retry resumes after the parts already in
 * Slack. Calls are spaced per method and channel (SlackRateGate) and a 429 pauses the method.
 * `edit` is chat.update, for progressive edits of a message already posted.
 */
export class SlackSender implements OutboundSender {
  readonly #client: WebClient;
  readonly #account: string;
  readonly #gate = new SlackRateGate();

  constructor(client: WebClient, account: string = DEFAULT_ACCOUNT) {
    this.#client = client;
    this.#account = account;
  }

  /** The sender of one Slack app (account): its bot token, and only targets naming that account. */
  static fromConfig(config: SlackConfig): SlackSender {
    return new SlackSender(slackWebClient(config), config.account ?? DEFAULT_ACCOUNT);
  }

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    const channel = item.target.chatId;
    if (channel === undefined || channel === '') throw new DeliveryError('target.chatId is missing', { retryable: false });
    const account = item.target.account ?? DEFAULT_ACCOUNT;
    if (account !== this.#account) throw new DeliveryError(`no Slack account '${account}' is configured here`, { retryable: false });
    const parts = splitMarkdown(item.text, SLACK_LIMIT).map((part) => markdownToSlackMrkdwn(part));
    const ids = await this.#adoptDrafts(item, channel, parts, signal);
    for (let part = ids.length; part < parts.length; part++) {
      const text = parts[part] ?? '';
      const blocks = part === parts.length - 1 ? slackButtonBlocks(text, item.target.buttons) : undefined;
      const found = item.progress.inFlight?.part === part ? await this.#findPosted(channel, item.target.threadId, item.id, part, item.attempts) : undefined;
      if (found === undefined) await item.progress.beginPart(part, null);
      const ts = found ?? (await this.#post(item, channel, part, text, blocks, signal));
      await item.progress.partSent(part, ts);
      ids.push(ts);
    }
    // A draft that did not become a part (a retried step streamed longer text): not left as if it were one.
    for (const extra of item.drafts.filter((draft) => !ids.includes(draft))) await this.drafts.remove(item.target, extra, signal);
    if (item.source === 'reply' && item.target.replyTo !== undefined) await this.stopWorking(channel, item.target.replyTo, signal);
    return { messageIds: ids, channel };
  }

  /**
   * A file shared in the chat (in the row's thread) the way the official client's files.uploadV2
   * does it: files.getUploadURLExternal, the bytes to the URL it returns, then
   * files.completeUploadExternal with the channel, the thread and the row's text as the comment.
   * Text over one message follows as messages. The receipt names the file (Slack shares it as a
   * message of its own, whose ts the upload does not return).
   */
  async sendFile(item: OutboundDelivery, file: OutboundFile, signal: AbortSignal): Promise<DeliveryReceipt> {
    const channel = item.target.chatId;
    if (channel === undefined || channel === '') throw new DeliveryError('target.chatId is missing', { retryable: false });
    const comment = item.text.length <= SLACK_LIMIT ? markdownToSlackMrkdwn(item.text) : '';
    const fileId = await this.#call('files.uploadV2', channel, item.attempts, signal, async () => {
      const contents = { file: file.bytes, filename: file.name, title: file.name, ...(comment === '' ? {} : { initial_comment: comment }) };
      const threadTs = item.target.threadId;
      const uploaded = await this.#client.filesUploadV2(threadTs ? { ...contents, channel_id: channel, thread_ts: threadTs } : { ...contents, channel_id: channel });
      const completed = uploaded.files as { files?: { id?: string }[] }[] | undefined;
      return completed?.[0]?.files?.[0]?.id ?? '';
    });
    if (comment !== '' || item.text === '') return { messageIds: [fileId], channel };
    const rest = await this.send({ ...item, file: null }, signal);
    return { messageIds: [fileId, ...rest.messageIds], channel };
  }

  /**
   * Streamed drafts: one plain message in the chat (in the row's thread), replaced by chat.update as
   * the answer grows. Slack answers message_not_found for a message someone deleted.
   */
  readonly drafts: DraftCalls = {
    maxChars: SLACK_LIMIT,
    post: async (target, text, _first, signal) => {
      const channel = target.chatId ?? '';
      return this.#call('chat.postMessage', channel, 1, signal, async () => {
        const sent = await this.#client.chat.postMessage({ channel, text: escapeSlack(text), ...(target.threadId ? { thread_ts: target.threadId } : {}), unfurl_links: false });
        return sent.ts ?? '';
      });
    },
    edit: (target, messageId, text, signal) => this.#update(target.chatId ?? '', messageId, escapeSlack(text), undefined, signal),
    remove: async (target, messageId, signal) => {
      const channel = target.chatId ?? '';
      await this.#call('chat.delete', channel, 1, signal, async () => {
        await this.#client.chat.delete({ channel, ts: messageId });
        return messageId;
      }).catch((error: unknown) => {
        if (!isGone(error)) throw error;
      });
    },
  };

  /**
   * The streamed drafts become the answer's first parts, each updated to its part's text (an update
   * is idempotent, so a retry repeats it safely) and recorded as sent. A draft someone deleted is
   * given up: its part and the rest are posted anew.
   */
  async #adoptDrafts(item: OutboundDelivery, channel: string, parts: readonly string[], signal: AbortSignal): Promise<string[]> {
    const ids = [...item.progress.partsSent];
    for (let part = ids.length; part < Math.min(item.drafts.length, parts.length); part++) {
      const draft = item.drafts[part];
      const text = parts[part];
      if (draft === undefined || text === undefined) break;
      const blocks = part === parts.length - 1 ? slackButtonBlocks(text, item.target.buttons) : undefined;
      if (!(await this.#update(channel, draft, text, blocks, signal))) break;
      await item.progress.partSent(part, draft);
      ids.push(draft);
    }
    return ids;
  }

  /** chat.update of a message this bot posted; false when it is gone (deleted). */
  async #update(channel: string, ts: string, text: string, blocks: SlackBlock[] | undefined, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#call('chat.update', channel, 1, signal, async () => {
        await this.#client.chat.update({ channel, ts, text, ...(blocks ? { blocks } : {}) });
        return ts;
      });
      return true;
    } catch (error) {
      if (isGone(error)) return false;
      throw error;
    }
  }

  /**
   * One part, tagged with message metadata naming the outbox row and part: Slack's chat.postMessage
   * has no idempotency key, so that tag is how a later attempt finds a part that arrived although
   * its call timed out.
   */
  async #post(item: OutboundDelivery, channel: string, part: number, text: string, blocks: SlackBlock[] | undefined, signal: AbortSignal): Promise<string> {
    return this.#call('chat.postMessage', channel, item.attempts, signal, async () => {
      const sent = await this.#client.chat.postMessage({
        channel,
        text,
        ...(blocks ? { blocks } : {}),
        ...(item.target.threadId ? { thread_ts: item.target.threadId } : {}),
        unfurl_links: false,
        metadata: { event_type: OUTBOX_EVENT_TYPE, event_payload: { outbox_id: item.id, part } },
      });
      return sent.ts ?? '';
    });
  }

  /**
   * The ts of a part an earlier attempt posted, from the latest messages of its thread (or channel)
   * with their metadata; undefined when it never arrived, so it is sent now. A failed lookup is
   * thrown: the part stays in flight rather than risking a duplicate.
   */
  async #findPosted(channel: string, threadTs: string | undefined, outboxId: string, part: number, attempt: number): Promise<string | undefined> {
    const messages = await this.#call('conversations.history', channel, attempt, undefined, async () => {
      const page = threadTs
        ? await this.#client.conversations.replies({ channel, ts: threadTs, limit: 100, include_all_metadata: true })
        : await this.#client.conversations.history({ channel, limit: 100, include_all_metadata: true });
      return JSON.stringify(page.messages ?? []);
    });
    const posted = (JSON.parse(messages) as { ts?: string; metadata?: { event_type?: string; event_payload?: { outbox_id?: unknown; part?: unknown } } }[]).find(
      (message) => message.metadata?.event_type === OUTBOX_EVENT_TYPE && message.metadata.event_payload?.outbox_id === outboxId && Number(message.metadata.event_payload.part) === part,
    );
    return posted?.ts;
  }

  /** chat.update: replaces the text of a message this bot posted (its ts from a receipt). */
  async edit(target: Readonly<Record<string, string>>, messageId: string, markdown: string, signal: AbortSignal): Promise<void> {
    const channel = target.chatId ?? '';
    const text = markdownToSlackMrkdwn(markdown).slice(0, 3900);
    await this.#call('chat.update', channel, 1, signal, async () => {
      await this.#client.chat.update({ channel, ts: messageId, text });
      return messageId;
    });
  }

  /** The sign of work on a person's message; best effort (a missing scope only costs the sign). */
  async startWorking(channel: string, ts: string, signal?: AbortSignal): Promise<void> {
    await this.#reaction('reactions.add', channel, ts, signal);
  }

  async stopWorking(channel: string, ts: string, signal?: AbortSignal): Promise<void> {
    await this.#reaction('reactions.remove', channel, ts, signal);
  }

  /** An answer only one person sees (a refusal to someone who pressed another person's button). */
  async ephemeral(channel: string, user: string, text: string, threadTs: string | undefined): Promise<void> {
    await this.#call('chat.postEphemeral', channel, 1, undefined, async () => {
      await this.#client.chat.postEphemeral({ channel, user, text: markdownToSlackMrkdwn(text), ...(threadTs ? { thread_ts: threadTs } : {}) });
      return '';
    });
  }

  async #reaction(method: 'reactions.add' | 'reactions.remove', channel: string, ts: string, signal?: AbortSignal): Promise<void> {
    await this.#call(method, channel, 1, signal, async () => {
      await (method === 'reactions.add' ? this.#client.reactions.add : this.#client.reactions.remove).call(this.#client.reactions, {
        channel,
        timestamp: ts,
        name: WORKING_REACTION,
      });
      return ts;
    }).catch(() => undefined);
  }

  async #call(method: string, channel: string, attempt: number, signal: AbortSignal | undefined, call: () => Promise<string>): Promise<string> {
    await this.#gate.take(method, channel, signal);
    try {
      return await call();
    } catch (error) {
      const classified = classifySlackError(error, attempt);
      if ((error as { code?: string }).code === ErrorCode.RateLimitedError) this.#gate.pause(method, classified.retryAfterMs ?? 1000);
      throw classified;
    }
  }
}
