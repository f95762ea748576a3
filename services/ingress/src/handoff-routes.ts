import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { apiUserId } from '@herald/core';
import type { Db } from '@herald/db';
import { CHAT_PLATFORMS } from '@herald/core';
import { sessionExists } from '@herald/session';
import { latestHandoff, requestHandoff } from '@herald/handoff';
import type { HandoffView } from '@herald/handoff';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams } from './contracts/common.ts';
import { handoffView } from './contracts/session-views.ts';

// POST /v1/sessions/:id/handoff {platform, user_id?}: asks a worker to move the session to that
// platform's home chat (docs/api.md#handoff); GET /v1/sessions/:id/handoff: the latest request.

const handoffBody = z.strictObject({
  platform: z.enum(CHAT_PLATFORMS, { error: `expected one of ${CHAT_PLATFORMS.join(', ')}` }),
  user_id: z.string().trim().min(1).max(256).optional(),
});

export function handoffJson(handoff: HandoffView): Record<string, unknown> {
  return {
    id: handoff.id,
    session_id: handoff.sessionId,
    platform: handoff.platform,
    status: handoff.status,
    reason: handoff.reason,
    requested_by: handoff.requestedBy,
    target_chat_id: handoff.targetChatId,
    requested_at: handoff.requestedAt.toISOString(),
    finished_at: handoff.finishedAt?.toISOString() ?? null,
  };
}

export function registerHandoffRoutes(app: FastifyInstance, db: Db): void {
  app.post<{ Params: { id: string } }>(
    '/v1/sessions/:id/handoff',
    withContract({ summary: 'Hand a session over to a platform home chat', tags: ['sessions'], params: idParams, body: handoffBody, response: { 202: handoffView } }),
    async (request, reply) => {
      // An unknown session is a 404 whatever the body says (malformed ids are 400 before any handler).
      if (!(await sessionExists(db, request.params.id))) return sendError(reply, 404, 'not_found', 'no such session');
      if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
        return sendError(reply, 400, 'invalid_request', 'body: expected a JSON object', 'body');
      }
      const parsed = handoffBody.safeParse(request.body);
      if (!parsed.success) {
        const issue = firstIssue(parsed.error);
        return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
      }
      // The API's token is the operator's: its handoff may end the home chat's own session.
      const outcome = await requestHandoff(db, request.params.id, parsed.data.platform, apiUserId(parsed.data.user_id ?? 'api'), true);
      if (outcome.kind === 'not_found') return sendError(reply, 404, 'not_found', 'no such session');
      if (outcome.kind === 'ended') return sendError(reply, 409, 'session_ended', `the session has ended (${outcome.reason}); hand off the chat's current session`);
      if (outcome.kind === 'open') {
        return sendError(reply, 409, 'handoff_in_progress', `handoff ${outcome.handoff.id} of this session is already ${outcome.handoff.status}`);
      }
      return reply.code(202).send(handoffJson(outcome.handoff));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/handoff',
    withContract({ summary: 'The latest handoff of a session', tags: ['sessions'], params: idParams, response: { 200: handoffView } }),
    async (request, reply) => {
      const handoff = await latestHandoff(db, request.params.id);
      if (handoff) return handoffJson(handoff);
      return sendError(reply, 404, 'not_found', (await sessionExists(db, request.params.id)) ? 'no handoff was asked for this session' : 'no such session');
    },
  );
}
