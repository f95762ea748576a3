import { skillText } from '@herald/knowledge';
import type { SkillSummary } from '@herald/knowledge';

export function summaryView(skill: SkillSummary) {
  return {
    name: skill.name,
    description: skill.description,
    category: skill.category,
    tags: skill.tags,
    version: skill.version,
    pinned: skill.pinned,
    created_by: skill.createdBy,
    // 'builtin': Herald's own skill (skills/ in the repository), with its version and state.
    origin: skill.builtin === null ? 'profile' : 'builtin',
    builtin: skill.builtin === null ? null : { version: skill.builtin.version, edited: skill.builtin.edited, offered_version: skill.builtin.offeredVersion },
    updated_at: skill.updatedAt.toISOString(),
    shared: skill.shared,
    owner_id: skill.ownerId,
  };
}

/** A file in the export and import format: text as is, anything else as base64. */
export type SkillFileJson = string | { encoding: 'base64'; content: string };

export function encodeSkillFile(content: Buffer): SkillFileJson {
  const text = skillText(content);
  return text ?? { encoding: 'base64', content: content.toString('base64') };
}

export function decodeSkillFile(file: SkillFileJson): Buffer {
  return typeof file === 'string' ? Buffer.from(file, 'utf8') : Buffer.from(file.content, 'base64');
}
