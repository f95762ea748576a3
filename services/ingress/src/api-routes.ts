import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { apiUserId } from '@herald/core';
import type { Config, Logger } from '@herald/core';
import { acceptInbound, acceptOptionsFrom, BacklogFullError, getEvent, LimitExceededError, QUEUE_MODES, sessionLineage } from '@herald/session';
import type { Db } from '@herald/db';
import { announceAccepted } from '@herald/queue';
import { gatewayDispatch } from '@herald/hooks';
import type { Hooks } from '@herald/hooks';
import { metricsText, withSpan } from '@herald/telemetry';
import type { NoticeBus, RunQueue, TurnDoneListener } from '@herald/queue';
import { sendError } from './api-errors.ts';
import { firstIssue, messageBody, waitQuery } from './message-body.ts';
import { waitForReply } from './reply-waiter.ts';
import { waitingView } from './wait-views.ts';

export interface ApiDependencies {
  config: Config;
  db: Db;
  queue: RunQueue;
  notices: NoticeBus;
  listener: TurnDoneListener;
  logger: Logger;
  /** Lifecycle hooks: pre_gateway_dispatch may drop or rewrite a message before it is committed. */
  hooks?: Hooks | undefined;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerApiRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  const { config, db, queue, listener, logger } = deps;

  app.get('/healthz', async () => ({ status: 'ok' }));

  // Prometheus scrapes without the API token, as it does /healthz: route only /v1 and the platform
  // webhooks to the internet (docs/operations.md).
  app.get('/metrics', async (_request, reply) => {
    const { contentType, text } = await metricsText();
    return reply.header('content-type', contentType).send(text);
  });

  app.get('/readyz', async (_request, reply) => {
    const [postgres, queueStore] = await Promise.all([
      withTimeout(sql`SELECT 1`.execute(db), 2000).then(
        () => 'ok',
        (error: Error) => error.message,
      ),
      deps.notices.ping(2000).then(
        () => 'ok',
        (error: Error) => error.message,
      ),
    ]);
    const ready = postgres === 'ok' && queueStore === 'ok';
    // The queue's store answers under its own name: `redis`, or `queue` when it is Postgres too.
    const store = deps.notices.store === 'redis' ? 'redis' : 'queue';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', postgres, [store]: queueStore });
  });

  app.post('/v1/messages', async (request, reply) => {
    const query = waitQuery.safeParse(request.query);
    if (!query.success) {
      const issue = firstIssue(query.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
      return sendError(reply, 400, 'invalid_request', 'body: expected a JSON object', 'body');
    }
    const parsed = messageBody.safeParse(request.body);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const body = parsed.data;
    if (body.text.length > config.limits.maxMessageChars) {
      return sendError(
        reply,
        413,
        'payload_too_large',
        `text: ${body.text.length} characters, the limit is ${config.limits.maxMessageChars} (HERALD_MAX_MESSAGE_CHARS)`,
        'text',
      );
    }
    const dispatch = await gatewayDispatch(deps.hooks, db, { profileId: 'main', platform: 'api', chatId: body.chat_id, threadId: body.thread_id, userId: body.user_id, text: body.text });
    if (dispatch.kind === 'skip') return reply.code(200).send({ status: 'skipped', reason: dispatch.reason });
    let accepted;
    try {
      accepted = await withSpan('herald.ingress.accept', { 'herald.platform': 'api' }, async () => {
        const committed = await acceptInbound(db, {
      profileId: 'main',
      platform: 'api',
      chatType: 'dm',
      chatId: body.chat_id,
      threadId: body.thread_id,
      userId: apiUserId(body.user_id),
      userName: body.user_name,
      text: dispatch.text,
      dedupeKey: body.idempotency_key === undefined ? undefined : `api:${body.chat_id}:${body.idempotency_key}`,
        }, acceptOptionsFrom(config));
        await announceAccepted({ queue, notices: deps.notices, queuePrefix: config.redis.queuePrefix, logger }, committed);
        return committed;
      });
    } catch (error) {
      if (error instanceof BacklogFullError) return sendError(reply, 429, 'backlog_full', error.message);
      if (error instanceof LimitExceededError) {
        // The error shape of sendError, plus which limit, so a client can tell them apart.
        return reply
          .code(429)
          .header('retry-after', String(error.retryAfterSeconds))
          .send({ error: { code: 'limit_exceeded', message: error.message, limit: error.limit } });
      }
      throw error;
    }
    const ids = { event_id: accepted.eventId, session_id: accepted.sessionId };
    const waitSeconds = query.data.wait;
    if (waitSeconds === undefined || waitSeconds === 0) {
      if (waitSeconds === 0 || !accepted.needsWake || accepted.answered === true) {
        const event = await getEvent(db, accepted.eventId);
        if (event?.status === 'done' || event?.status === 'failed') {
          return reply.code(200).send({ ...ids, reply: { text: event.replyText ?? '' } });
        }
        if (event?.waiting) return reply.code(202).send({ ...ids, status: 'waiting', waiting: waitingView(event.waiting) });
      }
      return reply.code(202).send(ids);
    }
    const closed = new AbortController();
    request.raw.once('close', () => closed.abort());
    const event = await waitForReply(db, listener, accepted.eventId, waitSeconds * 1000, closed.signal, !accepted.duplicate && accepted.needsWake);
    if (event?.status === 'done' || event?.status === 'failed') {
      return reply.code(200).send({ ...ids, reply: { text: event.replyText ?? '' } });
    }
    if (event?.waiting) return reply.code(202).send({ ...ids, status: 'waiting', waiting: waitingView(event.waiting) });
    return reply.code(202).send(ids);
  });

  app.get<{ Params: { id: string } }>('/v1/events/:id', async (request, reply) => {
    const event = await getEvent(db, request.params.id);
    if (!event) return sendError(reply, 404, 'not_found', 'no such event');
    const done = event.status === 'done' || event.status === 'failed';
    return {
      event_id: event.id,
      session_id: event.sessionId,
      status: event.waiting ? 'waiting' : event.status,
      reply: done ? { text: event.replyText ?? '' } : null,
      ...(event.waiting ? { waiting: waitingView(event.waiting) } : {}),
    };
  });

  const sessionView = async (id: string) => {
    const row = await db
      .selectFrom('sessions')
      .select(['id', 'session_key', 'profile_id', 'platform', 'queue_mode', 'system_prompt', 'parent_session_id', 'created_at', 'title', 'ended_at', 'end_reason'])
      .select((eb) => eb.selectFrom('sessions as c').select('c.id').whereRef('c.parent_session_id', '=', 'sessions.id').orderBy('c.created_at').limit(1).as('child_session_id'))
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      session_id: row.id,
      session_key: row.session_key,
      profile: row.profile_id,
      platform: row.platform,
      queue_mode: row.queue_mode,
      system_prompt: row.system_prompt,
      parent_session_id: row.parent_session_id,
      child_session_id: row.child_session_id,
      title: row.title,
      end_reason: row.end_reason,
      ended_at: row.ended_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
    };
  };

  app.get<{ Params: { id: string } }>('/v1/sessions/:id', async (request, reply) => {
    const view = await sessionView(request.params.id);
    return view ?? sendError(reply, 404, 'not_found', 'no such session');
  });

  app.get<{ Params: { id: string } }>('/v1/sessions/:id/lineage', async (request, reply) => {
    const chain = await sessionLineage(db, request.params.id);
    if (chain.length === 0) return sendError(reply, 404, 'not_found', 'no such session');
    return {
      sessions: chain.map((entry) => ({
        session_id: entry.sessionId,
        title: entry.title,
        parent_session_id: entry.parentSessionId,
        end_reason: entry.endReason,
        ended_at: entry.endedAt?.toISOString() ?? null,
        created_at: entry.createdAt.toISOString(),
      })),
    };
  });

  app.patch<{ Params: { id: string } }>('/v1/sessions/:id', async (request, reply) => {
    const body = request.body as { queue_mode?: unknown } | null;
    const mode = body?.queue_mode;
    if (typeof mode !== 'string' || !(QUEUE_MODES as readonly string[]).includes(mode)) {
      return sendError(reply, 400, 'invalid_request', `queue_mode: expected one of ${QUEUE_MODES.join(', ')}`, 'queue_mode');
    }
    const updated = await db
      .updateTable('sessions')
      .set({ queue_mode: mode as (typeof QUEUE_MODES)[number], updated_at: new Date() })
      .where('id', '=', request.params.id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return sendError(reply, 404, 'not_found', 'no such session');
    return sessionView(request.params.id);
  });
}
