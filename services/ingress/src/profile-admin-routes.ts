import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db, ProfileCache } from '@herald/db';
import { createProfile, deleteProfile, listProfiles, profileNameSchema } from '@herald/profiles';
import type { ProfileCompanions } from '@herald/profiles';
import { copyProfileHooks } from '@herald/hooks';
import { copyProfileSkills, seedProfileBuiltinSkills } from '@herald/knowledge';
import { pauseProfileJobs } from '@herald/cron';
import { sendError, sendInvalid } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { profileParams } from './contracts/common.ts';
import { profileList, profileSummary } from './contracts/profile-views.ts';

// Profiles as a collection (issue 31): list, create (optionally as a copy), delete (softly).
// One profile's view and changes are in profile-routes.ts; both go through @herald/profiles.

/** A profile's hooks and skills go with its copy, Herald's skills into every new one, its cron jobs stop with its deletion (each lib's own function). */
const COMPANIONS: ProfileCompanions = {
  async copy(trx, name, from) {
    await copyProfileHooks(trx, name, from);
    await copyProfileSkills(trx, name, from);
  },
  // Herald's own skills at once, not at the next migrate.
  seed: (trx, name) => seedProfileBuiltinSkills(trx, name),
  retire: (trx, name) => pauseProfileJobs(trx, name),
};

export const createProfileBody = z.strictObject({ name: profileNameSchema, from: z.string().min(1).max(40).optional() });

export const profileDeletedResponse = z.object({ profile: z.string(), deleted: z.literal(true) });

export function registerProfileAdminRoutes(app: FastifyInstance, db: Db, profiles?: ProfileCache): void {
  app.get('/v1/profiles', withContract({ summary: 'The profiles, with their models and bindings', tags: ['profiles'], response: { 200: profileList } }), async () =>
    profileList.parse({ profiles: await listProfiles(db) }),
  );

  app.post(
    '/v1/profiles',
    withContract({ summary: 'Create a profile, optionally a copy of another (never its memory or sessions)', tags: ['profiles'], body: createProfileBody, response: { 201: profileSummary } }),
    async (request, reply) => {
      const parsed = createProfileBody.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      const { name, from } = parsed.data;
      const outcome = await createProfile(db, name, from, 'api', COMPANIONS);
      if (outcome.kind === 'exists') return sendError(reply, 409, 'conflict', `name: a profile '${name}' exists (or existed: deleted names stay taken)`, 'name');
      if (outcome.kind === 'no_source') return sendError(reply, 400, 'invalid_request', `from: no profile '${from ?? ''}'`, 'from');
      const created = (await listProfiles(db)).find((profile) => profile.profile === name);
      return reply.code(201).send(profileSummary.parse(created));
    },
  );

  app.delete<{ Params: { profile: string } }>(
    '/v1/profiles/:profile',
    withContract({ summary: 'Delete a profile softly: its sessions and history stay, read-only', tags: ['profiles'], params: profileParams, response: { 200: profileDeletedResponse } }),
    async (request, reply) => {
      const name = request.params.profile;
      const outcome = await deleteProfile(db, name, 'api', COMPANIONS);
      if (outcome.kind === 'main') return sendError(reply, 409, 'conflict', "the profile 'main' cannot be deleted: unbound traffic goes to it");
      if (outcome.kind === 'missing') return sendError(reply, 404, 'not_found', 'no such profile');
      if (outcome.kind === 'bound') {
        return sendError(reply, 409, 'conflict', `profile '${name}' still has ${outcome.bindings.length} binding(s); remove them first`);
      }
      profiles?.invalidate(name);
      return profileDeletedResponse.parse({ profile: name, deleted: true });
    },
  );
}
