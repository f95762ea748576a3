import type { FastifyInstance } from 'fastify';
import { sessionRecord, setQueueMode } from '@herald/session';
import { QUEUE_MODES } from '@herald/inbox';
import { sessionLineage } from '@herald/lineage';
import type { Db } from '@herald/db';
import { sendError } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { z } from 'zod';
import { idParams } from './contracts/common.ts';
import { lineageView, sessionRecord as sessionRecordSchema } from './contracts/session-views.ts';

/** The PATCH body; the handler words its own 400 (`queue_mode: expected one of ...`). */
const sessionPatch = z.object({ queue_mode: z.enum(QUEUE_MODES) });

/** One session's record in the API's shape. */
async function sessionView(db: Db, id: string) {
  const record = await sessionRecord(db, id);
  if (!record) return undefined;
  return {
    session_id: record.sessionId,
    session_key: record.sessionKey,
    profile: record.profileId,
    platform: record.platform,
    queue_mode: record.queueMode,
    system_prompt: record.systemPrompt,
    parent_session_id: record.parentSessionId,
    child_session_id: record.childSessionId,
    title: record.title,
    end_reason: record.endReason,
    ended_at: record.endedAt?.toISOString() ?? null,
    created_at: record.createdAt.toISOString(),
  };
}

/** A session's own record, its lineage (the chain of compressions) and its queue mode. */
export function registerSessionRecordRoutes(app: FastifyInstance, db: Db): void {
  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    withContract({ summary: 'A session record', tags: ['sessions'], params: idParams, response: { 200: sessionRecordSchema } }),
    async (request, reply) => {
      const view = await sessionView(db, request.params.id);
      return view ?? sendError(reply, 404, 'not_found', 'no such session');
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/lineage',
    withContract({ summary: 'A session lineage (its chain of compressions)', tags: ['sessions'], params: idParams, response: { 200: lineageView } }),
    async (request, reply) => {
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
    },
  );

  app.patch<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    withContract({ summary: 'Change a session queue mode', tags: ['sessions'], params: idParams, body: sessionPatch, response: { 200: sessionRecordSchema } }),
    async (request, reply) => {
      const parsed = sessionPatch.safeParse(request.body ?? {});
      if (!parsed.success) {
        return sendError(reply, 400, 'invalid_request', `queue_mode: expected one of ${QUEUE_MODES.join(', ')}`, 'queue_mode');
      }
      const mode = parsed.data.queue_mode;
      if (!(await setQueueMode(db, request.params.id, mode))) return sendError(reply, 404, 'not_found', 'no such session');
      return sessionView(db, request.params.id);
    },
  );
}
