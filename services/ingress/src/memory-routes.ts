import type { FastifyInstance } from 'fastify';
import { apiUserId } from '@herald/core';
import { asActor } from '@herald/audit';
import { deleteMemoryEntry, readMemory, readOwnMemory } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { MemoryState } from '@herald/knowledge';
import { sendError } from './api-errors.ts';
import { profileExists } from './profile-exists.ts';
import { withContract } from './contracts/route-contract.ts';
import { z } from 'zod';
import { noContent, profileParams } from './contracts/common.ts';
import { memoryView as memoryViewSchema } from './contracts/knowledge-views.ts';

const memoryQuery = z.object({ user_id: z.string().min(1).max(256).optional() });

function memoryView(state: MemoryState) {
  return { entries: state.entries, usage: { chars: state.chars, limit: state.limit } };
}

/** A profile's two memory stores: the agent's notes and what it knows of each person. */
export function registerMemoryRoutes(app: FastifyInstance, db: Db): void {
  // The profile-wide notes, or with ?user_id= one person's own notes (a bare id is the API's): the
  // entries they own as stored, also while memory_shared keeps them out of the prompts.
  app.get<{ Params: { profile: string }; Querystring: { user_id?: unknown } }>(
    '/v1/profiles/:profile/memory',
    withContract({ summary: 'The profile notes, or one person own notes', tags: ['memory'], params: profileParams, querystring: memoryQuery, response: { 200: memoryViewSchema } }),
    async (request, reply) => {
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      const parsed = memoryQuery.safeParse(request.query);
      if (!parsed.success) return sendError(reply, 400, 'invalid_request', 'user_id: expected a user id', 'user_id');
      const user = parsed.data.user_id;
      return memoryView(await readOwnMemory(db, { profileId: request.params.profile, store: 'memory', userId: user === undefined ? '' : apiUserId(user) }));
    },
  );

  app.get<{ Params: { profile: string; user: string } }>(
    '/v1/profiles/:profile/users/:user/memory',
    withContract({ summary: 'What the profile knows of one person', tags: ['memory'], params: z.object({ profile: z.string(), user: z.string() }), response: { 200: memoryViewSchema } }),
    async (request, reply) => {
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      return memoryView(await readMemory(db, { profileId: request.params.profile, store: 'user', userId: apiUserId(request.params.user) }));
    },
  );

  app.delete<{ Params: { profile: string; entry: string } }>(
    '/v1/profiles/:profile/memory/:entry',
    withContract({ summary: 'Delete a memory entry', tags: ['memory'], params: z.object({ profile: z.string(), entry: z.string().regex(/^[1-9][0-9]{0,17}$/) }), response: { 204: noContent } }),
    async (request, reply) => {
      const deleted = await asActor(db, 'api', (trx) => deleteMemoryEntry(trx, request.params.profile, request.params.entry));
      if (!deleted) return sendError(reply, 404, 'not_found', 'no such memory entry');
      return reply.code(204).send();
    },
  );
}
