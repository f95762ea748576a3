import { z } from 'zod';
import { scanInPlace } from '@herald/knowledge';
import { applySkillChange, getSkill, listSkills, readSkillFiles, SKILL_MD, skillText, viewedKey } from '@herald/knowledge';
import type { SkillChange } from '@herald/knowledge';
import { defineTool } from '../shared/tool.ts';
import type { ToolContext } from '../shared/tool.ts';

export const SKILL_TOOL_NAMES = ['skills_list', 'skill_view', 'skill_manage'] as const;

const listArgs = z.object({
  category: z.string().max(64).optional().describe('Only skills of this category'),
});

export const skillsListTool = defineTool({
  name: 'skills_list',
  toolset: 'skills',
  description: "List this profile's skills (name, description, category, tags); load one with skill_view.",
  guidance: '',
  schema: listArgs,
  replaySafe: true,
  async execute(args, context) {
    // The shared skills and the person's own (docs/security.md, "Skills: who sees what").
    const skills = (await listSkills(context.db, context.profileId, { person: context.userId })).filter((skill) => args.category === undefined || skill.category === args.category);
    return JSON.stringify({
      success: true,
      count: skills.length,
      skills: skills.map((skill) => ({
        name: skill.name,
        description: skill.description,
        category: skill.category,
        tags: skill.tags,
        ...(skill.pinned ? { pinned: true } : {}),
        ...(skill.shared ? {} : { shared: false }),
      })),
    });
  },
});

const viewArgs = z.object({
  name: z.string().min(1).max(64).describe('The skill name'),
  file_path: z.string().max(255).optional().describe('A supporting file to read, e.g. references/api.md; omit for SKILL.md'),
});

export const skillViewTool = defineTool({
  name: 'skill_view',
  toolset: 'skills',
  description: 'Load a skill: its SKILL.md (instructions) and the list of its supporting files, or one supporting file with file_path.',
  guidance: '',
  schema: viewArgs,
  replaySafe: true,
  async execute(args, context) {
    const path = args.file_path ?? SKILL_MD;
    const [skill, files] = await Promise.all([
      getSkill(context.db, context.profileId, args.name, { person: context.userId }),
      readSkillFiles(context.db, context.profileId, args.name, undefined, { person: context.userId }),
    ]);
    if (!skill || !files) return JSON.stringify({ success: false, error: `no skill named '${args.name}'; skills_list shows the existing ones` });
    const content = files.get(path);
    if (content === undefined) {
      return JSON.stringify({
        success: false,
        error: `the skill '${args.name}' has no file '${path}'`,
        files: [...files.keys()],
      });
    }
    context.review?.viewed.add(viewedKey(args.name, path));
    const text = skillText(content);
    return JSON.stringify({
      success: true,
      name: skill.name,
      file_path: path,
      version: skill.version,
      ...(skill.pinned ? { pinned: true } : {}),
      content: text ?? `(binary file, ${content.length} bytes)`,
      ...(path === SKILL_MD ? { files: [...files.keys()].filter((p) => p !== SKILL_MD) } : {}),
    });
  },
});

const manageArgs = z
  .object({
    action: z.enum(['create', 'patch', 'edit', 'delete', 'write_file', 'remove_file']),
    name: z.string().min(1).max(64).describe('The skill name: lowercase letters, digits, ., _ or -'),
    content: z.string().optional().describe('create, edit: the whole SKILL.md, YAML frontmatter (name, description) then the body'),
    category: z.string().max(64).optional().describe('create: the category to file the skill under'),
    old_string: z.string().optional().describe('patch: the exact text to replace; it must match once unless replace_all'),
    new_string: z.string().optional().describe('patch: the replacement text'),
    replace_all: z.boolean().optional().describe('patch: replace every match'),
    file_path: z.string().max(255).optional().describe('patch, write_file, remove_file: a file under references/, templates/, scripts/ or assets/ (patch defaults to SKILL.md)'),
    file_content: z.string().optional().describe('write_file: the file content'),
    absorbed_into: z.string().max(64).optional().describe('delete: the skill that now covers this one'),
  })
  .superRefine((args, ctx) => {
    const need = (field: keyof typeof args) => {
      if (args[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${args.action} needs '${field}'` });
    };
    if (args.action === 'create' || args.action === 'edit') need('content');
    if (args.action === 'patch') {
      need('old_string');
      need('new_string');
    }
    if (args.action === 'write_file') {
      need('file_path');
      need('file_content');
    }
    if (args.action === 'remove_file') need('file_path');
  });
type ManageArgs = z.infer<typeof manageArgs>;

function toChange(args: ManageArgs): SkillChange {
  switch (args.action) {
    case 'create':
      return { action: 'create', name: args.name, content: args.content ?? '', category: args.category };
    case 'edit':
      return { action: 'edit', name: args.name, content: args.content ?? '' };
    case 'patch':
      return {
        action: 'patch',
        name: args.name,
        old_string: args.old_string ?? '',
        new_string: args.new_string ?? '',
        file_path: args.file_path,
        replace_all: args.replace_all,
      };
    case 'delete':
      return { action: 'delete', name: args.name, absorbed_into: args.absorbed_into };
    case 'write_file':
      return { action: 'write_file', name: args.name, file_path: args.file_path ?? '', file_content: args.file_content ?? '' };
    case 'remove_file':
      return { action: 'remove_file', name: args.name, file_path: args.file_path ?? '' };
  }
}

async function manage(args: ManageArgs, context: ToolContext): Promise<string> {
  const result = await context.fencedWrite((trx) =>
    applySkillChange(trx, context.profileId, toChange(args), {
      origin: context.review ? 'review' : 'session',
      author: context.review ? `review:${context.review.id}` : `session:${context.sessionId}`,
      scan: scanInPlace,
      viewed: context.review?.viewed,
      person: context.userId,
    }),
  );
  if (!result.ok) return JSON.stringify({ success: false, error: result.error });
  // What the review just wrote counts as viewed: it may refine it again in the same review.
  if (context.review && args.action !== 'delete') {
    context.review.viewed.add(viewedKey(args.name, args.file_path ?? SKILL_MD));
  }
  return JSON.stringify({ success: true, message: result.message, name: result.name, version: result.version });
}

export const skillManageTool = defineTool({
  name: 'skill_manage',
  toolset: 'skills',
  description:
    'Create and improve skills, reusable procedures for later conversations: create and edit take the whole SKILL.md, ' +
    'patch replaces old_string, write_file and remove_file handle supporting files. Prefer improving a skill to creating a near-duplicate.',
  guidance: 'After a complex task (5+ tool calls) or a correction from the person, save the procedure as a skill with skill_manage, or patch the skill you used if it was wrong or incomplete.',
  schema: manageArgs,
  replaySafe: false,
  execute: manage,
});
