import type { FastifyInstance } from 'fastify';
import { QUEUE_MODES, sessionLineage } from '@herald/session';
import type { Db } from '@herald/db';
import { sendError } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { z } from 'zod';
import { idParams } from './contracts/common.ts';
import { lineageView, sessionRecord } from './contracts/session-views.ts';

/** The PATCH body; the handler words its own 400 (`queue_mode: expected one of ...`). */
const sessionPatch = z.object({ queue_mode: z.enum(QUEUE_MODES) });

/** One session's record: its keys, stored system prompt, queue mode, and its first child. */
async function sessionView(db: Db, id: string) {
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
}

/** A session's own record, its lineage (the chain of compressions) and its queue mode. */
export function registerSessionRecordRoutes(app: FastifyInstance, db: Db): void {
  app.get<{ Params: { id: string } }>('/v1/sessions/:id', withContract({ summary: 'A session record', tags: ['sessions'], params: idParams, response: { 200: sessionRecord } }), async (request, reply) => {
    const view = await sessionView(db, request.params.id);
    return view ?? sendError(reply, 404, 'not_found', 'no such session');
  });

  app.get<{ Params: { id: string } }>('/v1/sessions/:id/lineage', withContract({ summary: 'A session lineage (its chain of compressions)', tags: ['sessions'], params: idParams, response: { 200: lineageView } }), async (request, reply) => {
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

  app.patch<{ Params: { id: string } }>('/v1/sessions/:id', withContract({ summary: 'Change a session queue mode', tags: ['sessions'], params: idParams, body: sessionPatch, response: { 200: sessionRecord } }), async (request, reply) => {
    const parsed = sessionPatch.safeParse(request.body ?? {});
    if (!parsed.success) {
      return sendError(reply, 400, 'invalid_request', `queue_mode: expected one of ${QUEUE_MODES.join(', ')}`, 'queue_mode');
    }
    const mode = parsed.data.queue_mode;
    const updated = await db
      .updateTable('sessions')
      .set({ queue_mode: mode, updated_at: new Date() })
      .where('id', '=', request.params.id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return sendError(reply, 404, 'not_found', 'no such session');
    return sessionView(db, request.params.id);
  });
}
