import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { apiUserId, uuidSchema } from '@herald/core';
import { MAX_HITS_PER_SESSION, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, SEARCH_SORTS, SearchQueryError, searchHistory } from '@herald/search';
import type { ReadRouting } from '@herald/db';
import { profileExists } from '@herald/profiles';
import type { SearchResult } from '@herald/search';
import { sendError } from './api-errors.ts';
import { readDbFor } from './read-your-writes.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { searchAnswer } from './contracts/knowledge-views.ts';

const ROLES = ['user', 'assistant', 'tool'] as const;

const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0),
);

const date = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), { error: 'expected an ISO date or date-time' })
  .transform((value) => new Date(value));

const searchQuery = z.object({
  q: z
    .string({ error: 'is required' })
    .max(MAX_QUERY_CHARS, { error: `at most ${MAX_QUERY_CHARS} characters` })
    .refine((value) => value.trim().length > 0, { error: 'must not be empty' }),
  user_id: z.string({ error: 'is required' }).trim().min(1).max(256),
  profile: z.string().min(1).max(128).default('main'),
  sort: z.enum(SEARCH_SORTS).optional(),
  role: commaList.pipe(z.array(z.enum(ROLES, { error: `expected a comma-separated list of ${ROLES.join(', ')}` })).max(3)).optional(),
  platform: commaList.pipe(z.array(z.string().max(64)).max(20)).optional(),
  session_id: uuidSchema.optional(),
  from: date.optional(),
  to: date.optional(),
  limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  hits: z.coerce.number({ error: 'expected a number' }).int().min(1).max(MAX_HITS_PER_SESSION).optional(),
  // Child sessions of delegate_task are searched only when asked for.
  subagents: z.enum(['true', 'false'], { error: 'expected true or false' }).optional(),
});

export function searchView(query: string, result: SearchResult) {
  return {
    query,
    route: result.route,
    matched: result.matched,
    sessions: result.sessions.map((session) => ({
      session_id: session.sessionId,
      platform: session.platform,
      chat_type: session.chatType,
      started_at: session.startedAt.toISOString(),
      hits: session.hits.map((hit) => ({
        message_id: hit.messageId,
        seq: hit.seq,
        role: hit.role,
        ...(hit.toolName === null ? {} : { tool_name: hit.toolName }),
        created_at: hit.createdAt.toISOString(),
        snippet: hit.snippet,
      })),
    })),
  };
}

/**
 * `GET /v1/search`: a person's history search. The caller holds the API token and names the person
 * (`user_id`); the scope rule is the same function the session_search tool uses. It tolerates lag:
 * it reads the replica when one is configured (read-your-writes.ts).
 */
export function registerSearchRoutes(app: FastifyInstance, reads: ReadRouting): void {
  app.get('/v1/search', withContract({ summary: 'A person history search', tags: ['search'], querystring: searchQuery, response: { 200: searchAnswer } }), async (request, reply) => {
    const parsed = searchQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      // role.1 -> role: the parameter is one comma-separated string.
      const field = issue.field.split('.')[0] ?? issue.field;
      return sendError(reply, 400, 'invalid_request', issue.message.replace(issue.field, field), field);
    }
    const query = parsed.data;
    if (query.from && query.to && query.from >= query.to) {
      return sendError(reply, 400, 'invalid_request', 'to: must be after from', 'to');
    }
    const { db } = await readDbFor(reads, request);
    if (!(await profileExists(db, query.profile))) return sendError(reply, 404, 'not_found', 'no such profile', 'profile');
    try {
      const result = await searchHistory(
        db,
        { profileId: query.profile, userId: apiUserId(query.user_id), subagents: query.subagents === 'true' },
        {
          query: query.q,
          sort: query.sort,
          roles: query.role,
          platforms: query.platform,
          sessionId: query.session_id,
          from: query.from,
          to: query.to,
          limit: query.limit,
          hitsPerSession: query.hits,
        },
      );
      return searchView(query.q, result);
    } catch (error) {
      if (SearchQueryError.isInstance(error)) return sendError(reply, 400, 'invalid_request', `q: ${error.message}`, 'q');
      throw error;
    }
  });
}
