import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { parseSkillMd, SKILL_MD } from './skill-format.ts';
import { skillText } from './skill-store.ts';
import { applySkillChange } from './skill-change.ts';
import type { SkillWriteOptions } from './skill-change.ts';

export interface SkillBundle {
  /** Relative path -> content; must include SKILL.md, whose frontmatter names the skill. */
  files: Record<string, Buffer>;
  /** The folder path the skill sat in under the skills root (`devops`, `mlops/inference`), if any. */
  category?: string | undefined;
  /** Where it was read from, to name it when it is skipped. */
  source?: string | undefined;
}

export type SkillImportResult = { ok: true; skills: { name: string; version: number; message: string }[] } | { ok: false; error: string; index: number };

class ImportFailed extends Error {
  readonly index: number;
  constructor(message: string, index: number) {
    super(message);
    this.index = index;
  }
}

/**
 * Imports several skills all or nothing (a person's directory tree or API upload): each bundle is
 * validated and scanned like any write; the first one that fails rolls the whole import back.
 */
export async function importSkills(db: Kysely<Database>, profileId: string, bundles: SkillBundle[], options: Omit<SkillWriteOptions, 'viewed' | 'origin'>): Promise<SkillImportResult> {
  try {
    const skills = await db.transaction().execute(async (trx) => {
      const done: { name: string; version: number; message: string }[] = [];
      for (const [index, bundle] of bundles.entries()) {
        const skillMd = bundle.files[SKILL_MD];
        const text = skillMd === undefined ? undefined : skillText(skillMd);
        if (text === undefined) throw new ImportFailed('SKILL.md is missing or not UTF-8 text', index);
        const parsed = parseSkillMd(text);
        if (!parsed.ok) throw new ImportFailed(parsed.error, index);
        const result = await applySkillChange(trx, profileId, { action: 'import', name: parsed.meta.name, files: bundle.files, category: bundle.category }, { ...options, origin: 'import' });
        if (!result.ok) throw new ImportFailed(`${parsed.meta.name}: ${result.error}`, index);
        done.push({ name: result.name, version: result.version, message: result.message });
      }
      return done;
    });
    return { ok: true, skills };
  } catch (error) {
    if (error instanceof ImportFailed) return { ok: false, error: error.message, index: error.index };
    throw error;
  }
}
