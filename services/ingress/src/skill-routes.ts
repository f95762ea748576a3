import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { asActor } from '@herald/audit';
import { getSkill, listSkills, readSkillFiles, setSkillPinned, setSkillShared, SKILL_MD, skillHistory } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { sendError, sendInvalid } from './api-errors.ts';
import { profileExists } from './profile-exists.ts';
import { encodeSkillFile, summaryView } from './skill-views.ts';
import { withContract } from './contracts/route-contract.ts';
import { profileParams } from './contracts/common.ts';
import { skillDetail, skillList, skillSummary } from './contracts/knowledge-views.ts';

const skillParams = z.object({ profile: z.string(), name: z.string() });

const pinBody = z.object({ pinned: z.boolean() }).strict();
const shareBody = z.object({ shared: z.boolean() }).strict();

/** One skill: its summary, the asked-for file (SKILL.md by default), its file list and versions. */
async function skillView(db: Db, profile: string, name: string, path: string) {
  const skill = await getSkill(db, profile, name);
  const files = await readSkillFiles(db, profile, name);
  if (!skill || !files) return 'no skill';
  const content = files.get(path);
  if (content === undefined) return 'no file';
  return {
    ...summaryView(skill),
    file_path: path,
    content: encodeSkillFile(content),
    files: [...files].map(([filePath, file]) => ({ path: filePath, bytes: file.length })),
    versions: (await skillHistory(db, profile, name)).map((version) => ({
      version: version.version,
      action: version.action,
      author: version.author,
      note: version.note,
      created_at: version.createdAt.toISOString(),
      files: version.files,
    })),
  };
}

/** People's view of a profile's skills: list, read with history, pin (export/import: skill-transfer-routes.ts). */
export function registerSkillRoutes(app: FastifyInstance, db: Db): void {
  app.get<{ Params: { profile: string } }>(
    '/v1/profiles/:profile/skills',
    withContract({ summary: 'A profile skills', tags: ['skills'], params: profileParams, response: { 200: skillList } }),
    async (request, reply) => {
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      return { skills: (await listSkills(db, request.params.profile)).map(summaryView) };
    },
  );

  app.get<{ Params: { profile: string; name: string }; Querystring: { file_path?: string } }>(
    '/v1/profiles/:profile/skills/:name',
    withContract({
      summary: 'A skill: one of its files (SKILL.md by default), its file list and versions',
      tags: ['skills'],
      params: skillParams,
      querystring: z.object({ file_path: z.string().optional() }),
      response: { 200: skillDetail },
    }),
    async (request, reply) => {
      const path = request.query.file_path ?? SKILL_MD;
      const view = await skillView(db, request.params.profile, request.params.name, path);
      if (view === 'no skill') return sendError(reply, 404, 'not_found', 'no such skill');
      if (view === 'no file') return sendError(reply, 404, 'not_found', `file_path: the skill has no file '${path}'`, 'file_path');
      return view;
    },
  );

  app.put<{ Params: { profile: string; name: string } }>(
    '/v1/profiles/:profile/skills/:name/pin',
    withContract({ summary: 'Pin or unpin a skill', tags: ['skills'], params: skillParams, body: pinBody, response: { 200: skillSummary } }),
    async (request, reply) => {
      const parsed = pinBody.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      const { profile, name } = request.params;
      const changed = await asActor(db, 'api', (trx) => setSkillPinned(trx, profile, name, parsed.data.pinned));
      if (!changed) return sendError(reply, 404, 'not_found', 'no such skill');
      const skill = await getSkill(db, profile, name);
      return skill ? summaryView(skill) : sendError(reply, 404, 'not_found', 'no such skill');
    },
  );

  // Sharing a person's skill with everyone in the profile is an operator's act (the API token's);
  // the audit trail records it (herald_audit_skill_share). { "shared": false } takes it back.
  const shareContract = { summary: "Share a person's skill with the whole profile, or take it back", tags: ['skills'], params: skillParams, body: shareBody, response: { 200: skillSummary } };
  app.put<{ Params: { profile: string; name: string } }>('/v1/profiles/:profile/skills/:name/share', withContract(shareContract), async (request, reply) => {
    const parsed = shareBody.safeParse(request.body ?? {});
    if (!parsed.success) return sendInvalid(reply, parsed.error);
    const { profile, name } = request.params;
    const changed = await asActor(db, 'api', (trx) => setSkillShared(trx, profile, name, parsed.data.shared));
    if (!changed) return sendError(reply, 404, 'not_found', 'no such skill');
    const skill = await getSkill(db, profile, name);
    return skill ? summaryView(skill) : sendError(reply, 404, 'not_found', 'no such skill');
  });
}
