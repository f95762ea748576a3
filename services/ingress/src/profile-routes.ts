import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { resetRulesSchema } from '@herald/core';
import { toolPolicySchema } from '@herald/tools';
import type { Db, ProfileCache } from '@herald/db';
import { sendError, sendInvalid } from './api-errors.ts';
import { asActor, withAudit } from '@herald/audit';
import type { AuditEntry } from '@herald/audit';
import {
  deleteProfileDocument,
  modelSettingsSchema,
  profileDocuments,
  profileExists,
  profileModelSettings,
  profileRecord,
  profileState,
  putProfileDocument,
  setProfileModel,
  unknownProvider,
  updateProfileSettings,
} from '@herald/profiles';
import { DEFAULT_PROVIDERS } from './profile-exists.ts';
import { withContract } from './contracts/route-contract.ts';
import { noContent, profileParams } from './contracts/common.ts';
import { documentView, profileView as profileViewSchema } from './contracts/profile-views.ts';

const documentParams = z.object({ profile: z.string(), name: z.string() });

const profilePatch = z
  .object({
    display_name: z.string().min(1).max(200).optional(),
    identity: z.string().max(50_000).optional(),
    memory_char_limit: z.number().int().min(100).max(100_000).optional(),
    user_char_limit: z.number().int().min(100).max(100_000).optional(),
    tool_policy: toolPolicySchema.optional(),
    memory_review_interval: z.number().int().min(0).max(10_000).optional(),
    skill_review_interval: z.number().int().min(0).max(10_000).optional(),
    // Chat types whose sessions everyone in the profile may search (history search scope).
    search_shared_chat_types: z.array(z.string().trim().min(1).max(64)).max(20).optional(),
    // The agent's notes (memory store) shared by everyone the profile talks to; off: each person's own.
    memory_shared: z.boolean().optional(),
    // Reset rules tried before HERALD_SESSION_RESET's (docs/long-chats.md#resets); [] for none of its own.
    session_reset: resetRulesSchema.optional(),
    // The profile's own models (docs/configuration.md#models-per-profile); null: the deployment's.
    model: modelSettingsSchema.nullable().optional(),
  })
  .strict();

type ProfilePatch = z.infer<typeof profilePatch>;

/** A profile PATCH as the audit trail keeps it: which fields, and the new tool policy in full. */
function profileChange(profileId: string, patch: ProfilePatch): AuditEntry {
  const detail = {
    fields: Object.keys(patch).sort(),
    ...(patch.tool_policy === undefined ? {} : { tool_policy: patch.tool_policy }),
    ...(patch.session_reset === undefined ? {} : { session_reset: patch.session_reset }),
  };
  return { kind: 'admin_change', actor: 'api', profileId, subject: `profile:${profileId}`, detail };
}

const documentBody = z.object({ content: z.string().min(1).max(200_000) }).strict();

async function profileView(db: Db, id: string) {
  const profile = await profileRecord(db, id);
  if (!profile) return undefined;
  const documents = await profileDocuments(db, profile.id);
  return {
    profile: profile.id,
    display_name: profile.display_name,
    identity: profile.identity,
    memory_char_limit: profile.memory_char_limit,
    user_char_limit: profile.user_char_limit,
    tool_policy: profile.tool_policy,
    memory_review_interval: profile.memory_review_interval,
    skill_review_interval: profile.skill_review_interval,
    search_shared_chat_types: profile.search_shared_chat_types,
    memory_shared: profile.memory_shared,
    session_reset: profile.session_reset,
    // Provider/model names only: keys stay in the environment and are never shown.
    model: await profileModelSettings(db, profile.id),
    deleted_at: profile.deleted_at === null ? null : profile.deleted_at.toISOString(),
    documents: documents.map((d) => ({ name: d.name, content: d.content, updated_at: d.updatedAt.toISOString() })),
  };
}

/** The change and its audit entry commit together (policies included). */
async function updateProfile(db: Db, profileId: string, patch: ProfilePatch): Promise<void> {
  const { model, ...settings } = patch;
  if (model !== undefined) await setProfileModel(db, profileId, model, 'api');
  if (Object.keys(settings).length === 0) return;
  await withAudit(db, async (trx) => {
    await updateProfileSettings(trx, profileId, settings);
    return { result: undefined, audit: profileChange(profileId, patch) };
  });
}

/**
 * People's view of a profile: identity, settings and context documents (memory: memory-routes.ts).
 * A change of its reset rules reaches other processes' profile caches by NOTIFY; this process's
 * cache is told at once, so the next message here sees it.
 */
export function registerProfileRoutes(app: FastifyInstance, db: Db, profiles?: ProfileCache, providers: ReadonlySet<string> = DEFAULT_PROVIDERS): void {
  app.get<{ Params: { profile: string } }>(
    '/v1/profiles/:profile',
    withContract({ summary: 'A profile: identity, settings and context documents', tags: ['profiles'], params: profileParams, response: { 200: profileViewSchema } }),
    async (request, reply) => {
      return (await profileView(db, request.params.profile)) ?? sendError(reply, 404, 'not_found', 'no such profile');
    },
  );

  app.patch<{ Params: { profile: string } }>(
    '/v1/profiles/:profile',
    withContract({ summary: 'Change a profile settings', tags: ['profiles'], params: profileParams, body: profilePatch, response: { 200: profileViewSchema } }),
    async (request, reply) => {
      const parsed = profilePatch.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      const unknown = parsed.data.model ? unknownProvider(parsed.data.model, providers) : undefined;
      if (unknown) return sendError(reply, 400, 'invalid_request', unknown.message, unknown.field);
      const state = await profileState(db, request.params.profile);
      if (state === 'missing') return sendError(reply, 404, 'not_found', 'no such profile');
      if (state === 'deleted') return sendError(reply, 409, 'conflict', 'the profile was deleted; its records are read-only');
      if (Object.keys(parsed.data).length > 0) {
        await updateProfile(db, request.params.profile, parsed.data);
        profiles?.invalidate(request.params.profile);
      }
      return profileView(db, request.params.profile);
    },
  );

  app.put<{ Params: { profile: string; name: string } }>(
    '/v1/profiles/:profile/documents/:name',
    withContract({ summary: 'Write a context document', tags: ['profiles'], params: documentParams, body: documentBody, response: { 200: documentView } }),
    async (request, reply) => {
      const parsed = documentBody.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      await asActor(db, 'api', (trx) => putProfileDocument(trx, request.params.profile, request.params.name, parsed.data.content));
      return { profile: request.params.profile, name: request.params.name, content: parsed.data.content };
    },
  );

  app.delete<{ Params: { profile: string; name: string } }>(
    '/v1/profiles/:profile/documents/:name',
    withContract({ summary: 'Delete a context document', tags: ['profiles'], params: documentParams, response: { 204: noContent } }),
    async (request, reply) => {
      const deleted = await asActor(db, 'api', (trx) => deleteProfileDocument(trx, request.params.profile, request.params.name));
      if (!deleted) return sendError(reply, 404, 'not_found', 'no such document');
      return reply.code(204).send();
    },
  );
}
