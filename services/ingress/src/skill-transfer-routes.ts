import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { importSkills, listSkills, readSkillFiles, scanInPlace } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { sendError, sendInvalid } from './api-errors.ts';
import { profileExists } from './profile-exists.ts';
import { decodeSkillFile, encodeSkillFile } from './skill-views.ts';
import { withContract } from './contracts/route-contract.ts';
import { profileParams } from './contracts/common.ts';
import { skillExport, skillFile, skillImported } from './contracts/knowledge-views.ts';

const fileBody = skillFile;

const importBody = z
  .object({
    skills: z
      .array(z.object({ files: z.record(z.string().min(1).max(255), fileBody) }).strict())
      .min(1)
      .max(500),
  })
  .strict();

/**
 * A profile's skills as a whole, out and in (all or nothing).
 * `_export` and `_import` cannot collide with a skill: names start with a letter or digit.
 */
export function registerSkillTransferRoutes(app: FastifyInstance, db: Db): void {
  app.get<{ Params: { profile: string } }>(
    '/v1/profiles/:profile/skills/_export',
    withContract({ summary: 'Export every skill of a profile', tags: ['skills'], params: profileParams, response: { 200: skillExport } }),
    async (request, reply) => {
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      const skills = await listSkills(db, request.params.profile);
      const bundles = [];
      for (const skill of skills) {
        const files = (await readSkillFiles(db, request.params.profile, skill.name)) ?? new Map<string, Buffer>();
        bundles.push({ name: skill.name, files: Object.fromEntries([...files].map(([path, content]) => [path, encodeSkillFile(content)])) });
      }
      return { skills: bundles };
    },
  );

  app.post<{ Params: { profile: string } }>(
    '/v1/profiles/:profile/skills/_import',
    withContract({ summary: 'Import skills, all or nothing', tags: ['skills'], params: profileParams, body: importBody, response: { 200: skillImported } }),
    async (request, reply) => {
      const parsed = importBody.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      const bundles = parsed.data.skills.map((skill) => ({
        files: Object.fromEntries(Object.entries(skill.files).map(([path, file]) => [path, decodeSkillFile(file)])),
      }));
      const result = await importSkills(db, request.params.profile, bundles, { author: 'api', scan: scanInPlace });
      if (!result.ok) {
        return sendError(reply, 400, 'invalid_request', `skills.${result.index}: ${result.error}`, `skills.${result.index}`);
      }
      return { imported: result.skills };
    },
  );
}
