import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { withAudit } from '@herald/audit';
import type { Db, ProfileCache } from '@herald/db';
import { profileHooksOf, profileHooksSchema, saveProfileHooks } from '@herald/hooks';
import { profileExists as profileExistsIn } from '@herald/profiles';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { profileParams } from './contracts/common.ts';
import { hooksView } from './contracts/profile-views.ts';

const hooksBody = z.strictObject({ hooks: profileHooksSchema });

/**
 * A profile's own hooks (`GET`/`PUT /v1/profiles/:profile/hooks`): command and url hooks that run
 * after the file's. Module hooks are refused here: they run inside the worker, so only the
 * operator's HERALD_HOOKS_FILE may name one. Each change is audited in its own transaction, and
 * this process's profile cache is told at once (other processes hear of it by NOTIFY).
 */
export function registerHookRoutes(app: FastifyInstance, db: Db, options: { signing: boolean; profiles?: ProfileCache | undefined }): void {
  const profileExists = (id: string) => profileExistsIn(db, id);

  app.get<{ Params: { profile: string } }>(
    '/v1/profiles/:profile/hooks',
    withContract({ summary: 'A profile own hooks', tags: ['profiles'], params: profileParams, response: { 200: hooksView } }),
    async (request, reply) => {
      if (!(await profileExists(request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      return { hooks: await profileHooksOf(db, request.params.profile) };
    },
  );

  app.put<{ Params: { profile: string } }>(
    '/v1/profiles/:profile/hooks',
    withContract({ summary: 'Replace a profile own hooks', tags: ['profiles'], params: profileParams, body: hooksBody, response: { 200: hooksView } }),
    async (request, reply) => {
      const parsed = hooksBody.safeParse(request.body ?? {});
      if (!parsed.success) {
        const issue = firstIssue(parsed.error);
        return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
      }
      const hooks = parsed.data.hooks;
      if (!options.signing && hooks.some((hook) => 'url' in hook)) {
        return sendError(reply, 400, 'invalid_request', 'hooks: url hooks need HERALD_HOOKS_SECRET set on the deployment (their events are signed)', 'hooks');
      }
      const names = hooks.map((hook) => hook.name);
      if (new Set(names).size !== names.length) return sendError(reply, 400, 'invalid_request', 'hooks: hook names must be unique', 'hooks');
      const profileId = request.params.profile;
      if (!(await profileExists(profileId))) return sendError(reply, 404, 'not_found', 'no such profile');
      await withAudit(db, async (trx) => {
        await saveProfileHooks(trx, profileId, hooks);
        const detail = { hooks: hooks.map((hook) => ({ name: hook.name, event: hook.event, kind: 'url' in hook ? 'url' : 'command' })) };
        return { result: undefined, audit: { kind: 'admin_change', actor: 'api', profileId, subject: `hooks:${profileId}`, detail } };
      });
      options.profiles?.invalidate(profileId);
      return { hooks };
    },
  );
}
