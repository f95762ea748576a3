import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { apiUserId } from '@herald/core';
import { listAudit } from '@herald/audit';
import type { AuditView } from '@herald/audit';
import { ALLOWED_VALUES } from '@herald/db';
import type { Db } from '@herald/db';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { auditPage } from './contracts/admin-views.ts';

const date = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), { error: 'expected an ISO date or date-time' })
  .transform((value) => new Date(value));

const auditQuery = z.strictObject({
  person: z.string().trim().min(1).max(256).optional(),
  session_id: z.uuid({ error: 'expected a session id (uuid)' }).optional(),
  kind: z.enum(ALLOWED_VALUES['audit_log.kind'], { error: `expected one of ${ALLOWED_VALUES['audit_log.kind'].join(', ')}` }).optional(),
  from: date.optional(),
  to: date.optional(),
  // The `next` of the previous page: a positive decimal id, nothing else.
  before: z
    .string()
    .regex(/^[1-9][0-9]{0,17}$/, { error: 'expected the next cursor of a previous page' })
    .optional(),
  limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(500).default(100),
});

function entryView(entry: AuditView) {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    kind: entry.kind,
    actor: entry.actor,
    profile_id: entry.profileId,
    session_id: entry.sessionId,
    turn_id: entry.turnId,
    subject: entry.subject,
    detail: entry.detail,
  };
}

/**
 * `GET /v1/audit`: the audit trail, newest first, keyset paged. It is the only audit route: the
 * trail is written by the changes it records and never changed through the API (the table's
 * trigger refuses UPDATE and DELETE besides the retention prune).
 */
export function registerAuditRoutes(app: FastifyInstance, db: Db): void {
  app.get('/v1/audit', withContract({ summary: 'The audit trail, newest first, keyset paged', tags: ['audit'], querystring: auditQuery, response: { 200: auditPage } }), async (request, reply) => {
    const parsed = auditQuery.safeParse(request.query);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const query = parsed.data;
    const page = await listAudit(db, {
      // The same person as in a message: `alice` is the API's `api:alice`; a qualified id is taken as is.
      person: query.person === undefined ? undefined : apiUserId(query.person),
      sessionId: query.session_id,
      kind: query.kind,
      since: query.from,
      until: query.to,
      before: query.before,
      limit: query.limit,
    });
    return reply.send({ entries: page.entries.map(entryView), next: page.next });
  });
}
