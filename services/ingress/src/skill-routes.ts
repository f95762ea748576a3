import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { uuidSchema } from '@herald/core';
import { scanForInjection } from '@herald/knowledge';
import { getReview, getSkill, importSkills, listReviews, listSkills, readSkillFiles, setSkillPinned, SKILL_MD, skillHistory, skillText } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { asActor } from '@herald/audit';
import type { SkillSummary } from '@herald/knowledge';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';

function summaryView(skill: SkillSummary) {
  return {
    name: skill.name,
    description: skill.description,
    category: skill.category,
    tags: skill.tags,
    version: skill.version,
    pinned: skill.pinned,
    created_by: skill.createdBy,
    updated_at: skill.updatedAt.toISOString(),
  };
}

/** A file in the export and import format: text as is, anything else as base64. */
const fileBody = z.union([
  z.string(),
  z.object({ encoding: z.literal('base64'), content: z.string() }).strict(),
]);

const importBody = z
  .object({
    skills: z
      .array(z.object({ files: z.record(z.string().min(1).max(255), fileBody) }).strict())
      .min(1)
      .max(500),
  })
  .strict();

const pinBody = z.object({ pinned: z.boolean() }).strict();

const reviewQuery = z.object({
  session_id: uuidSchema.optional(),
  profile: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

function encode(content: Buffer): string | { encoding: 'base64'; content: string } {
  const text = skillText(content);
  return text ?? { encoding: 'base64', content: content.toString('base64') };
}

/**
 * People's view of skills (list, read, history, export, import, pin) and of background reviews.
 * `_export` and `_import` cannot collide with a skill: names start with a letter or digit.
 */
export function registerSkillRoutes(app: FastifyInstance, db: Db): void {
  const profileExists = async (id: string) =>
    (await db.selectFrom('profiles').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

  app.get<{ Params: { profile: string } }>('/v1/profiles/:profile/skills', async (request, reply) => {
    if (!(await profileExists(request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
    return { skills: (await listSkills(db, request.params.profile)).map(summaryView) };
  });

  app.get<{ Params: { profile: string } }>('/v1/profiles/:profile/skills/_export', async (request, reply) => {
    if (!(await profileExists(request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
    const skills = await listSkills(db, request.params.profile);
    const bundles = [];
    for (const skill of skills) {
      const files = (await readSkillFiles(db, request.params.profile, skill.name)) ?? new Map<string, Buffer>();
      bundles.push({ name: skill.name, files: Object.fromEntries([...files].map(([path, content]) => [path, encode(content)])) });
    }
    return { skills: bundles };
  });

  app.post<{ Params: { profile: string } }>('/v1/profiles/:profile/skills/_import', async (request, reply) => {
    const parsed = importBody.safeParse(request.body ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    if (!(await profileExists(request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
    const bundles = parsed.data.skills.map((skill) => ({
      files: Object.fromEntries(
        Object.entries(skill.files).map(([path, file]) => [
          path,
          typeof file === 'string' ? Buffer.from(file, 'utf8') : Buffer.from(file.content, 'base64'),
        ]),
      ),
    }));
    const result = await importSkills(db, request.params.profile, bundles, { author: 'api', scan: scanForInjection });
    if (!result.ok) {
      return sendError(reply, 400, 'invalid_request', `skills.${result.index}: ${result.error}`, `skills.${result.index}`);
    }
    return { imported: result.skills };
  });

  app.get<{ Params: { profile: string; name: string }; Querystring: { file_path?: string } }>(
    '/v1/profiles/:profile/skills/:name',
    async (request, reply) => {
      const { profile, name } = request.params;
      const skill = await getSkill(db, profile, name);
      const files = await readSkillFiles(db, profile, name);
      if (!skill || !files) return sendError(reply, 404, 'not_found', 'no such skill');
      const path = request.query.file_path ?? SKILL_MD;
      const content = files.get(path);
      if (content === undefined) return sendError(reply, 404, 'not_found', `file_path: the skill has no file '${path}'`, 'file_path');
      return {
        ...summaryView(skill),
        file_path: path,
        content: encode(content),
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
    },
  );

  app.put<{ Params: { profile: string; name: string } }>('/v1/profiles/:profile/skills/:name/pin', async (request, reply) => {
    const parsed = pinBody.safeParse(request.body ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const { profile, name } = request.params;
    const changed = await asActor(db, 'api', (trx) => setSkillPinned(trx, profile, name, parsed.data.pinned));
    if (!changed) return sendError(reply, 404, 'not_found', 'no such skill');
    const skill = await getSkill(db, profile, name);
    return skill ? summaryView(skill) : sendError(reply, 404, 'not_found', 'no such skill');
  });

  app.get('/v1/reviews', async (request, reply) => {
    const parsed = reviewQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    return {
      reviews: await listReviews(db, { sessionId: parsed.data.session_id, profileId: parsed.data.profile, limit: parsed.data.limit }),
    };
  });

  app.get<{ Params: { id: string } }>('/v1/reviews/:id', async (request, reply) => {
    return (await getReview(db, request.params.id)) ?? sendError(reply, 404, 'not_found', 'no such review');
  });
}
