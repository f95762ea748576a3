import type { FastifyReply } from 'fastify';
import type { ZodError } from 'zod';
import { firstIssue } from './message-body.ts';

export type ApiErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'invalid_request'
  | 'not_pending'
  | 'payload_too_large'
  | 'backlog_full'
  | 'not_requester'
  | 'not_found'
  | 'conflict'
  | 'session_ended'
  | 'handoff_in_progress'
  | 'unavailable'
  | 'internal';

/** One error shape for every route: `{error: {code, message, field?}}`. */
export function sendError(reply: FastifyReply, status: number, code: ApiErrorCode, message: string, field?: string): FastifyReply {
  return reply.code(status).send({ error: { code, message, ...(field === undefined ? {} : { field }) } });
}

/** A 400 naming the first problem zod found, as every route answers a malformed request. */
export function sendInvalid(reply: FastifyReply, error: ZodError): FastifyReply {
  const issue = firstIssue(error);
  return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
}
