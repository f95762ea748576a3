import type { FastifyReply } from 'fastify';

export type ApiErrorCode =
  | 'unauthorized'
  | 'invalid_request'
  | 'not_pending'
  | 'payload_too_large'
  | 'backlog_full'
  | 'not_requester'
  | 'not_found'
  | 'session_ended'
  | 'handoff_in_progress'
  | 'unavailable'
  | 'internal';

/** One error shape for every route: `{error: {code, message, field?}}`. */
export function sendError(
  reply: FastifyReply,
  status: number,
  code: ApiErrorCode,
  message: string,
  field?: string,
): FastifyReply {
  return reply.code(status).send({ error: { code, message, ...(field === undefined ? {} : { field }) } });
}
