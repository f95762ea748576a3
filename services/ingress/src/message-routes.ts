import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiUserId } from '@herald/core';
import type { Config, Logger } from '@herald/core';
import { getEvent, listOpenEvents } from '@herald/session';
import { acceptInbound, acceptOptionsFrom, BacklogFullError, NotYourChatError, wasAccepted } from '@herald/inbox';
import { filesAdmission, LimitExceededError } from '@herald/limits';
import { AttachmentRefusedError, takeMessageFiles } from '@herald/attachments';
import type { Attachment } from '@herald/attachments';
import { apiFiles } from './api-attachments.ts';
import type { EventView } from '@herald/session';
import type { AcceptedEvent, InboundMessage } from '@herald/inbox';
import type { Db, ProfileCache } from '@herald/db';
import { announceAccepted } from '@herald/queue';
import { gatewayDispatch } from '@herald/hooks';
import type { Hooks } from '@herald/hooks';
import { withSpan } from '@herald/telemetry';
import type { NoticeBus, RunQueue, TurnDoneListener } from '@herald/queue';
import { sendError, sendInvalid } from './api-errors.ts';
import { MAIN_PROFILE, routeProfile } from '@herald/profiles';
import { profileState } from './profile-exists.ts';
import { messageBody, waitQuery } from './message-body.ts';
import type { MessageBody } from './message-body.ts';
import { waitForReply } from './reply-waiter.ts';
import { waitingView } from './wait-views.ts';
import { followTurn } from './turn-follow.ts';
import type { TurnStreamFollow } from './turn-follow.ts';
import { lastEventId, openEventStream, wantsEventStream } from './sse.ts';
import { withContract } from './contracts/route-contract.ts';
import { principalOfRequest } from './api-auth.ts';
import { chatRefusal, ownChatsOnly } from './route-guard.ts';
import { idParams } from './contracts/common.ts';
import { eventStream, eventView, messageAccepted, messageAnswer, openEventList } from './contracts/message-views.ts';

export interface MessageRouteDependencies {
  config: Config;
  db: Db;
  queue: RunQueue;
  notices: NoticeBus;
  listener: TurnDoneListener;
  logger: Logger;
  /** Lifecycle hooks: pre_gateway_dispatch may drop or rewrite a message before it is committed. */
  hooks?: Hooks | undefined;
  /** The process's profile cache (the one the hooks use): reset rules come from it, writes invalidate it. */
  profiles?: ProfileCache | undefined;
  /** Running turns' streams: SSE followers see text and tool calls as they happen, else only the end. */
  turnStream?: TurnStreamFollow | undefined;
}

type Ids = { event_id: string; session_id: string };

/** The budget warnings of the event's turn, when it gave any. */
function warningsOf(event: EventView): { budget_warnings?: string[] } {
  return event.budgetWarnings.length > 0 ? { budget_warnings: event.budgetWarnings } : {};
}

/** The answer for an event as it stands: its reply when finished, its pending wait, or just the ids. */
function eventAnswer(reply: FastifyReply, ids: Ids, event: EventView | undefined | null): FastifyReply {
  if (event?.status === 'done' || event?.status === 'failed') {
    return reply.code(200).send({ ...ids, reply: { text: event.replyText ?? '' }, ...warningsOf(event) });
  }
  if (event?.waiting) return reply.code(202).send({ ...ids, status: 'waiting', waiting: waitingView(event.waiting) });
  return reply.code(202).send(ids);
}

/** The body checked: a JSON object of the message shape, its text within HERALD_MAX_MESSAGE_CHARS. */
async function checkedBody(request: FastifyRequest, reply: FastifyReply, deps: MessageRouteDependencies): Promise<MessageBody | FastifyReply> {
  const { config } = deps;
  if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
    return sendError(reply, 400, 'invalid_request', 'body: expected a JSON object', 'body');
  }
  const parsed = messageBody.safeParse(request.body);
  if (!parsed.success) return sendInvalid(reply, parsed.error);
  const body = parsed.data;
  // A deleted profile's history stays readable, but it takes nothing new.
  if (body.profile !== undefined && (await profileState(deps.db, body.profile)) !== 'active') {
    return sendError(reply, 400, 'invalid_request', `profile: no profile '${body.profile}' takes messages (GET /v1/profiles lists them)`, 'profile');
  }
  // Without a profile named, the bindings decide (platform api, the chat and the person), else main.
  body.profile ??= await routeProfile(deps.db, { platform: 'api', chatId: body.chat_id, chatType: 'dm', userId: apiUserId(body.user_id) }, deps.profiles);
  if (body.text.length > config.limits.maxMessageChars) {
    const message = `text: ${body.text.length} characters, the limit is ${config.limits.maxMessageChars} (HERALD_MAX_MESSAGE_CHARS)`;
    return sendError(reply, 413, 'payload_too_large', message, 'text');
  }
  return body;
}

/** An API person's message as both API routes take it (POST /v1/messages, POST /v1/chat/completions). */
export type ApiMessage = Omit<InboundMessage, 'platform' | 'chatType'>;

/** Commits an API message and wakes a worker, in one span; a full backlog or a spent limit throws. */
export function acceptApiMessage(deps: MessageRouteDependencies, message: ApiMessage): Promise<AcceptedEvent> {
  const { config, db, queue, notices, logger } = deps;
  return withSpan('herald.ingress.accept', { 'herald.platform': 'api' }, async () => {
    const committed = await acceptInbound(db, { ...message, platform: 'api', chatType: 'dm' }, acceptOptionsFrom(config, deps.profiles));
    await announceAccepted({ queue, notices, queuePrefix: config.redis.queuePrefix, logger }, committed);
    return committed;
  });
}

const dedupeKeyOf = (body: MessageBody) => (body.idempotency_key === undefined ? undefined : `api:${body.chat_id}:${body.idempotency_key}`);

/** A spent limit: 429 in sendError's shape, plus which limit so a client can tell them apart, and when to retry. */
function sendLimited(reply: FastifyReply, error: LimitExceededError): FastifyReply {
  return reply
    .code(429)
    .header('retry-after', String(error.retryAfterSeconds))
    .send({ error: { code: 'limit_exceeded', message: error.message, limit: error.limit } });
}

/**
 * The message's files taken in (checked first, then stored; a repeated idempotency key fetches
 * nothing again); a refused file is a 400 naming it, and files past the person's daily allowance
 * a 429, with nothing stored.
 */
async function withFiles(deps: MessageRouteDependencies, reply: FastifyReply, body: MessageBody, text: string): Promise<{ text: string; attachments?: Attachment[] } | FastifyReply> {
  const files = body.attachments ?? [];
  const key = dedupeKeyOf(body);
  if (files.length === 0 || (key !== undefined && (await wasAccepted(deps.db, key)))) return { text };
  const sender = { userId: apiUserId(body.user_id), profileId: body.profile ?? MAIN_PROFILE, platform: 'api', chatId: body.chat_id };
  const admit = filesAdmission(deps.db, sender, deps.config.people.quotas);
  try {
    const taken = await takeMessageFiles(deps.db, deps.config.attachments, text, apiFiles(files, deps.config.tools.webAllowlist), { strict: true, admit });
    return { text: taken.text, attachments: taken.attachments };
  } catch (error) {
    if (error instanceof LimitExceededError) return sendLimited(reply, error);
    if (!(error instanceof AttachmentRefusedError)) throw error;
    const tooLarge = /larger than/.test(error.message);
    return sendError(reply, tooLarge ? 413 : 400, tooLarge ? 'payload_too_large' : 'invalid_request', error.message, error.field ?? 'attachments');
  }
}

const NOT_YOUR_CHAT = "chat_id: no such chat of yours (another person's chat cannot be joined: use another chat_id)";

/** Commits the message; a full backlog or a spent limit is a 429, another person's chat a 404. */
async function accept(deps: MessageRouteDependencies, reply: FastifyReply, body: MessageBody, dispatched: string, ownChat: boolean): Promise<AcceptedEvent | FastifyReply> {
  const taken = await withFiles(deps, reply, body, dispatched);
  if (!('text' in taken)) return taken;
  try {
    return await acceptApiMessage(deps, {
      attachments: taken.attachments,
      profileId: body.profile ?? MAIN_PROFILE,
      chatId: body.chat_id,
      threadId: body.thread_id,
      userId: apiUserId(body.user_id),
      userName: body.user_name,
      text: taken.text,
      dedupeKey: dedupeKeyOf(body),
      ownChat,
    });
  } catch (error) {
    if (error instanceof NotYourChatError) return sendError(reply, 404, 'not_found', NOT_YOUR_CHAT, 'chat_id');
    if (error instanceof BacklogFullError) return sendError(reply, 429, 'backlog_full', error.message);
    if (error instanceof LimitExceededError) return sendLimited(reply, error);
    throw error;
  }
}

/**
 * Answers with a server-sent event stream of the event's turn (delta, tool, waiting, done, error)
 * until it ends or the client leaves; the event and session ids are in the response headers.
 */
async function streamEvent(deps: MessageRouteDependencies, request: FastifyRequest, reply: FastifyReply, ids: Ids): Promise<void> {
  const stream = openEventStream(request, reply, { 'x-herald-event-id': ids.event_id, 'x-herald-session-id': ids.session_id });
  try {
    for await (const item of followTurn(deps, ids.event_id, lastEventId(request), stream.signal)) {
      stream.send(item.event, item.data, 'id' in item ? item.id : undefined);
    }
  } catch (error) {
    deps.logger.warn({ err: error, eventId: ids.event_id }, 'event stream failed');
    stream.send('error', { code: 'unavailable', message: 'the stream broke; reconnect to GET /v1/events/:id/stream' });
  } finally {
    stream.end();
  }
}

/** `POST /v1/messages` (optionally waiting for the reply, or streaming it) and `GET /v1/events/:id` (and its stream). */
export function registerMessageRoutes(app: FastifyInstance, deps: MessageRouteDependencies): void {
  const { db, listener } = deps;

  const postMessage = {
    summary: 'Send a message (optionally waiting up to ?wait= seconds for the reply)',
    tags: ['messages'],
    querystring: waitQuery,
    body: messageBody,
    response: { 200: messageAnswer, 202: messageAccepted },
  };
  app.post('/v1/messages', withContract(postMessage), async (request, reply) => {
    const query = waitQuery.safeParse(request.query);
    if (!query.success) return sendInvalid(reply, query.error);
    const body = await checkedBody(request, reply, deps);
    if (!('text' in body)) return body;
    // Checked on the profile the message goes to (bindings may pick it), before any hook or write.
    const address = { profileId: body.profile ?? MAIN_PROFILE, platform: 'api', chatType: 'dm', chatId: body.chat_id, threadId: body.thread_id };
    const principal = principalOfRequest(request);
    const refusal = await chatRefusal(db, principal, address);
    if (refusal === 'profile') return sendError(reply, 404, 'not_found', `profile: no such profile of yours ('${address.profileId}', where this chat goes)`, 'profile');
    if (refusal === 'chat_id') return sendError(reply, 404, 'not_found', NOT_YOUR_CHAT, 'chat_id');
    const dispatch = await gatewayDispatch(deps.hooks, db, {
      profileId: body.profile ?? MAIN_PROFILE,
      platform: 'api',
      chatId: body.chat_id,
      threadId: body.thread_id,
      userId: body.user_id,
      text: body.text,
    });
    if (dispatch.kind === 'skip') return reply.code(200).send({ status: 'skipped', reason: dispatch.reason });
    const accepted = await accept(deps, reply, body, dispatch.text, ownChatsOnly(principal, address.profileId));
    if (!('eventId' in accepted)) return accepted;
    const ids = { event_id: accepted.eventId, session_id: accepted.sessionId };
    if (wantsEventStream(request)) return streamEvent(deps, request, reply, ids);
    const waitSeconds = query.data.wait;
    if (waitSeconds === undefined || waitSeconds === 0) {
      // Without a wait, a reply already there (a duplicate, a chat command) is still returned.
      const settled = waitSeconds === 0 || !accepted.needsWake || accepted.answered === true;
      return eventAnswer(reply, ids, settled ? await getEvent(db, accepted.eventId) : undefined);
    }
    const closed = new AbortController();
    request.raw.once('close', () => closed.abort());
    const event = await waitForReply(db, listener, accepted.eventId, waitSeconds * 1000, closed.signal, !accepted.duplicate && accepted.needsWake);
    return eventAnswer(reply, ids, event);
  });

  registerEventRoutes(app, deps);
}

/** An accepted message's event: its status and reply, the stream of its turn, and a session's open ones. */
function registerEventRoutes(app: FastifyInstance, deps: MessageRouteDependencies): void {
  const { db } = deps;
  const streamContract = {
    summary: "Follow an event's turn as server-sent events (delta, tool, waiting, done, error)",
    tags: ['messages'],
    params: idParams,
    produces: 'text/event-stream',
    response: { 200: eventStream },
  };
  app.get<{ Params: { id: string } }>('/v1/events/:id/stream', withContract(streamContract), async (request, reply) => {
    const event = await getEvent(db, request.params.id);
    if (!event) return sendError(reply, 404, 'not_found', 'no such event');
    return streamEvent(deps, request, reply, { event_id: event.id, session_id: event.sessionId });
  });

  // A page showing a session finds here the turn to follow with GET /v1/events/:id/stream.
  const openContract = { summary: "A session's events whose turn has not ended, oldest first", tags: ['messages'], params: idParams, response: { 200: openEventList } };
  app.get<{ Params: { id: string } }>('/v1/sessions/:id/open-events', withContract(openContract), async (request, reply) => {
    const events = await listOpenEvents(db, request.params.id);
    if (!events) return sendError(reply, 404, 'not_found', 'no such session');
    return { events: events.map((event) => ({ event_id: event.id, status: event.status, received_at: event.receivedAt.toISOString() })) };
  });

  app.get<{ Params: { id: string } }>(
    '/v1/events/:id',
    withContract({ summary: 'An event: its status, reply or wait', tags: ['messages'], params: idParams, response: { 200: eventView } }),
    async (request, reply) => {
      const event = await getEvent(db, request.params.id);
      if (!event) return sendError(reply, 404, 'not_found', 'no such event');
      const done = event.status === 'done' || event.status === 'failed';
      return {
        event_id: event.id,
        session_id: event.sessionId,
        status: event.waiting ? 'waiting' : event.status,
        reply: done ? { text: event.replyText ?? '' } : null,
        ...(event.waiting ? { waiting: waitingView(event.waiting) } : {}),
        ...warningsOf(event),
      };
    },
  );
}
