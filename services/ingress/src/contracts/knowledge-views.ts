import { z } from 'zod';
import { isoTime } from './common.ts';

export const memoryView = z.object({
  entries: z.array(z.object({ id: z.string(), content: z.string() })),
  usage: z.object({ chars: z.number().int(), limit: z.number().int() }),
});

/** A file in the export and import format: text as is, anything else as base64 (skill-views.ts). */
export const skillFile = z.union([z.string(), z.object({ encoding: z.literal('base64'), content: z.string() }).strict()]);

export const skillSummary = z.object({
  name: z.string(),
  description: z.string(),
  category: z.string().nullable(),
  tags: z.array(z.string()),
  version: z.number().int(),
  pinned: z.boolean(),
  created_by: z.string(),
  /** 'builtin': Herald's own skill (skills/ in the repository), with its version and state. */
  origin: z.enum(['builtin', 'profile']),
  builtin: z.object({ version: z.number().int(), edited: z.boolean(), offered_version: z.number().int().nullable() }).nullable(),
  updated_at: isoTime,
  /** Visible to everyone in the profile; else only to owner_id (docs/security.md, "Skills: who sees what"). */
  shared: z.boolean(),
  owner_id: z.string().nullable(),
});

export const skillList = z.object({ skills: z.array(skillSummary) });

export const skillDetail = skillSummary.extend({
  file_path: z.string(),
  content: skillFile,
  files: z.array(z.object({ path: z.string(), bytes: z.number().int() })),
  versions: z.array(
    z.object({
      version: z.number().int(),
      action: z.string(),
      author: z.string(),
      note: z.string().nullable(),
      created_at: isoTime,
      files: z.array(z.string()),
    }),
  ),
});

export const skillExport = z.object({ skills: z.array(z.object({ name: z.string(), files: z.record(z.string(), skillFile) })) });
export const skillImported = z.object({ imported: z.array(z.object({ name: z.string(), version: z.number().int(), message: z.string() })) });

export const reviewView = z.object({
  id: z.string(),
  turn_id: z.string(),
  session_id: z.string(),
  profile: z.string(),
  user_id: z.string(),
  kinds: z.array(z.string()),
  status: z.string(),
  attempts: z.number().int(),
  actions: z.array(z.unknown()),
  summary: z.string().nullable(),
  error: z.string().nullable(),
  usage: z.object({ input_tokens: z.number(), cached_input_tokens: z.number(), output_tokens: z.number() }),
  created_at: isoTime,
  finished_at: isoTime.nullable(),
});

export const reviewList = z.object({ reviews: z.array(reviewView) });

const searchHit = z.object({
  message_id: z.string(),
  seq: z.number().int(),
  role: z.string(),
  tool_name: z.string().optional(),
  created_at: isoTime,
  snippet: z.string(),
});

export const searchAnswer = z.object({
  query: z.string(),
  route: z.string(),
  matched: z.number().int(),
  sessions: z.array(
    z.object({
      session_id: z.string(),
      platform: z.string(),
      chat_type: z.string(),
      started_at: isoTime,
      hits: z.array(searchHit),
    }),
  ),
});

export type MemoryView = z.infer<typeof memoryView>;
export type SkillSummary = z.infer<typeof skillSummary>;
export type SkillDetail = z.infer<typeof skillDetail>;
export type SkillList = z.infer<typeof skillList>;
export type SearchAnswer = z.infer<typeof searchAnswer>;
export type SearchHit = z.infer<typeof searchHit>;
