import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Config, Logger } from '@herald/core';
import { acceptInbound, BacklogFullError, getEvent, loadTranscript, QUEUE_MODES } from '@herald/session';
import type { Db } from '@herald/db';
import { announceAccepted } from '@herald/queue';
import { metricsText, withSpan } from '@herald/telemetry';
import type { NoticeBus, RunQueue, TurnDoneListener } from '@herald/queue';
import { sendError } from './api-errors.ts';
import { authorized } from './api-auth.ts';
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
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/v1/')) return;
    if (!authorized(request, config.apiToken)) {
      return sendError(reply, 401, 'unauthorized', 'missing or wrong bearer token (Authorization: Bearer <HERALD_API_TOKEN>)');
    }
    return undefined;
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
    if (body.text.length > config.maxMessageChars) {
      return sendError(
        reply,
        413,
        'payload_too_large',
        `text: ${body.text.length} characters, the limit is ${config.maxMessageChars} (HERALD_MAX_MESSAGE_CHARS)`,
        'text',
      );
    }
    let accepted;
    try {
      accepted = await withSpan('herald.ingress.accept', { 'herald.platform': 'api' }, async () => {
        const committed = await acceptInbound(db, {
      profileId: 'main',
      platform: 'api',
      chatType: 'dm',
      chatId: body.chat_id,
      threadId: body.thread_id,
      userId: body.user_id,
      userName: body.user_name,
      text: body.text,
      dedupeKey: body.idempotency_key === undefined ? undefined : `api:${body.chat_id}:${body.idempotency_key}`,
        }, { backlogLimit: config.sessionBacklog });
        await announceAccepted({ queue, notices: deps.notices, queuePrefix: config.queuePrefix, logger }, committed);
        return committed;
      });
    } catch (error) {
      if (error instanceof BacklogFullError) return sendError(reply, 429, 'backlog_full', error.message);
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
    if (!UUID.test(request.params.id)) return sendError(reply, 404, 'not_found', 'no such event');
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
      .select(['id', 'session_key', 'profile_id', 'platform', 'queue_mode', 'system_prompt', 'parent_session_id', 'created_at'])
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
      created_at: row.created_at.toISOString(),
    };
  };

  app.get<{ Params: { id: string } }>('/v1/sessions/:id', async (request, reply) => {
    const view = UUID.test(request.params.id) ? await sessionView(request.params.id) : undefined;
    return view ?? sendError(reply, 404, 'not_found', 'no such session');
  });

  app.patch<{ Params: { id: string } }>('/v1/sessions/:id', async (request, reply) => {
    if (!UUID.test(request.params.id)) return sendError(reply, 404, 'not_found', 'no such session');
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

  app.get<{ Params: { id: string } }>('/v1/sessions/:id/messages', async (request, reply) => {
    if (!UUID.test(request.params.id)) return sendError(reply, 404, 'not_found', 'no such session');
    const session = await db.selectFrom('sessions').select('id').where('id', '=', request.params.id).executeTakeFirst();
    if (!session) return sendError(reply, 404, 'not_found', 'no such session');
    const transcript = await loadTranscript(db, session.id);
    return {
      messages: transcript.map((message) => ({
        role: message.role,
        content: message.content,
        ...(message.toolCalls
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
                name: call.name,
                arguments: call.arguments,
              })),
            }
          : {}),
        ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
        ...(message.toolName === undefined ? {} : { name: message.toolName }),
        created_at: message.createdAt.toISOString(),
      })),
    };
  });
}
