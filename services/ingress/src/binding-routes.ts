import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db, ProfileCache } from '@herald/db';
import { bindingListSchema, readBindings, replaceBindings } from '@herald/profiles';
import { sendError, sendInvalid } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { bindingList } from './contracts/profile-views.ts';

// The bindings that route inbound traffic to profiles (issue 31 point 5): read and replaced as
// one ordered list; @herald/profiles stores them and decides which rule wins.

export const bindingsBody = z.strictObject({ bindings: bindingListSchema });

export function registerBindingRoutes(app: FastifyInstance, db: Db, profiles?: ProfileCache): void {
  app.get('/v1/bindings', withContract({ summary: 'The bindings, in order: which profile inbound traffic goes to', tags: ['profiles'], response: { 200: bindingList } }), async () => ({
    bindings: await readBindings(db),
  }));

  app.put(
    '/v1/bindings',
    withContract({ summary: 'Replace the bindings (the most specific match wins, else main)', tags: ['profiles'], body: bindingsBody, response: { 200: bindingList } }),
    async (request, reply) => {
      // A bare list is taken as the list.
      const body: unknown = Array.isArray(request.body) ? { bindings: request.body } : (request.body ?? {});
      const parsed = bindingsBody.safeParse(body);
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      const outcome = await replaceBindings(db, parsed.data.bindings, 'api');
      if (outcome.kind === 'missing_profile') {
        const field = `bindings.${outcome.index}.profile`;
        return sendError(reply, 400, 'invalid_request', `${field}: binding ${outcome.index} names the profile '${outcome.profile}', which does not exist (GET /v1/profiles lists them)`, field);
      }
      if (outcome.kind === 'refused') return sendError(reply, 400, 'invalid_request', outcome.message, 'bindings');
      // Other ingresses hear of it by NOTIFY; this one forgets its copy now.
      profiles?.invalidate();
      return { bindings: outcome.bindings };
    },
  );
}
