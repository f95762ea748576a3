import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Logger } from '@herald/core';
import { apiUserId } from '@herald/core';
import { sessionExists, sessionResourceOwner, wakeGenerations } from '@herald/session';
import { getWait, listWaits, mayAnswerWait, NOT_YOURS_REPLY, resolveWait } from '@herald/waits';
import { mayAct, personKeyOf } from '@herald/people';
import { principalOfRequest } from './api-auth.ts';
import type { Db } from '@herald/db';
import { enqueueWake } from '@herald/queue';
import type { RunQueue } from '@herald/queue';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { waitView } from './wait-views.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams } from './contracts/common.ts';
import { waitList, waitView as waitViewSchema } from './contracts/message-views.ts';

// Who answers: the person whose turn asked or an operator (HERALD_OPERATORS); a bare id is the
// API's own (`u1` is `api:u1`), a qualified one names its platform (`telegram:42`).
const answerer = z.string().trim().min(1).max(256).optional();

const answerBody = z.union([
  z.strictObject({
    decision: z.enum(['approve', 'deny'], { error: "expected 'approve' or 'deny'" }),
    scope: z.enum(['once', 'session'], { error: "expected 'once' or 'session'" }).default('once'),
    reason: z.string().max(2000).optional(),
    user_id: answerer,
  }),
  z.strictObject({ answer: z.string().trim().min(1, { error: 'expected a non-empty answer' }).max(32_000), user_id: answerer }),
]);

interface WaitRouteDependencies {
  db: Db;
  queue: RunQueue;
  logger: Logger;
  operators: readonly string[];
}

/** Approvals and clarifying questions, answered through the API instead of the chat. */
export function registerWaitRoutes(app: FastifyInstance, deps: WaitRouteDependencies): void {
  const { db } = deps;

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/waits',
    withContract({ summary: 'A session waits (approvals and questions)', tags: ['waits'], params: idParams, response: { 200: waitList } }),
    async (request, reply) => {
      if (!(await sessionExists(db, request.params.id))) return sendError(reply, 404, 'not_found', 'no such session');
      return { waits: (await listWaits(db, request.params.id)).map(waitView) };
    },
  );

  app.get<{ Params: { id: string } }>('/v1/waits/:id', withContract({ summary: 'A wait', tags: ['waits'], params: idParams, response: { 200: waitViewSchema } }), async (request, reply) => {
    const wait = await getWait(db, request.params.id);
    return wait ? waitView(wait) : sendError(reply, 404, 'not_found', 'no such wait');
  });

  app.post<{ Params: { id: string } }>(
    '/v1/waits/:id',
    withContract({ summary: 'Answer a wait: approve or deny a call, or answer a question', tags: ['waits'], params: idParams, body: answerBody, response: { 200: waitViewSchema } }),
    (request, reply) => answerWait(deps, request, reply),
  );
}

/** `POST /v1/waits/:id`: checks the answer fits the wait and who may give it, resolves it and wakes the session. */
async function answerWait(deps: WaitRouteDependencies, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
  const { db } = deps;
  const wait = await getWait(db, request.params.id);
  if (!wait) return sendError(reply, 404, 'not_found', 'no such wait');
  if (wait.kind === 'subagents') {
    // Nobody answers a parent parked on its children: it resumes when the last one ends.
    return sendError(reply, 409, 'not_pending', 'this wait is not for people: it ends when its child runs end; cancel them with POST /v1/runs/:id/cancel');
  }
  const parsed = answerBody.safeParse(request.body ?? {});
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    const hint = wait.kind === 'approval' ? '{"decision":"approve"|"deny","scope":"once"|"session"}' : '{"answer":"..."}';
    return sendError(reply, 400, 'invalid_request', `${issue.message}; this wait takes ${hint}`, issue.field);
  }
  const body = parsed.data;
  if ('answer' in body !== (wait.kind === 'clarify')) {
    const hint = wait.kind === 'approval' ? '{"decision":"approve"|"deny"}' : '{"answer":"..."}';
    return sendError(reply, 400, 'invalid_request', `this wait is a ${wait.kind}: send ${hint}`, 'body');
  }
  const principal = principalOfRequest(request);
  if (principal.kind !== 'person' && body.user_id === undefined) {
    return sendError(reply, 400, 'invalid_request', 'user_id: is required: who answers (the person whose turn asked, or an operator)', 'user_id');
  }
  // A person answers as themself; their operator grant on the wait's profile counts as HERALD_OPERATORS does.
  const by = principal.kind === 'person' ? principal.key : await personKeyOf(db, apiUserId(body.user_id ?? ''));
  const owner = await sessionResourceOwner(db, 'wait', wait.id);
  const operators = principal.kind === 'person' && owner && mayAct(principal, 'operate', owner) ? [...deps.operators, by] : deps.operators;
  if (!(await mayAnswerWait(db, wait.id, by, operators))) {
    return sendError(reply, 403, 'not_requester', NOT_YOURS_REPLY, 'user_id');
  }
  const sessionId =
    'answer' in body
      ? await resolveWait(db, wait.id, { status: 'answered', answer: body.answer, by })
      : await resolveWait(db, wait.id, {
          status: body.decision === 'approve' ? 'approved' : 'denied',
          answer: body.reason ?? null,
          by,
          remember: body.scope === 'session',
        });
  if (sessionId === null) {
    const now = await getWait(db, wait.id);
    return sendError(reply, 409, 'not_pending', `this wait is already ${now?.status ?? wait.status}`);
  }
  const [session] = await wakeGenerations(db, [sessionId]);
  if (!session) throw new Error(`session ${sessionId} of wait ${wait.id} is gone`);
  await enqueueWake(deps.queue, sessionId, session.wakeGeneration).catch((error: unknown) => deps.logger.warn({ err: error, sessionId }, 'wake-up enqueue failed; the reconciler will retry'));
  const updated = await getWait(db, wait.id);
  return updated ? waitView(updated) : sendError(reply, 404, 'not_found', 'no such wait');
}
