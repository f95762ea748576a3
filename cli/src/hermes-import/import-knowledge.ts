import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '@herald/db';
import type { MemoryStore } from '@herald/db';
import { importSkills, readSkillFiles, scanForInjection, SKILL_MD, writeMemory, parseSkillMd, skillText } from '@herald/knowledge';
import type { SkillBundle } from '@herald/knowledge';
import { readSkillTree } from '../skill-tree.ts';

/** Hermes' entry delimiter in MEMORY.md and USER.md (tools/memory_tool.py). */
const ENTRY_DELIMITER = '\n§\n';

export interface Skipped {
  what: string;
  why: string;
}

export interface KnowledgeReport {
  memory: { imported: number; alreadyThere: number; skipped: Skipped[] };
  skills: { imported: string[]; alreadyThere: string[]; skipped: Skipped[] };
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Split, strip, drop empties, dedupe keeping the first: how Hermes reads its own files. */
export function memoryEntries(text: string): string[] {
  return [...new Set(text.split(ENTRY_DELIMITER).map((entry) => entry.trim()).filter((entry) => entry !== ''))];
}

/**
 * MEMORY.md (the agent's notes) and USER.md (who the person is) become memory entries of the
 * person importing, one add at a time through the same write as the memory tool: an entry already
 * there is a no-op, one past the store's character limit or one that reads like prompt injection is
 * skipped and reported, never silently dropped.
 */
export async function importMemory(db: Db, home: string, profileId: string, userId: string, report: KnowledgeReport): Promise<void> {
  const files: [MemoryStore, string][] = [['memory', 'MEMORY.md'], ['user', 'USER.md']];
  for (const [store, file] of files) {
    const text = await readIfThere(join(home, 'memories', file));
    if (text === undefined) continue;
    for (const entry of memoryEntries(text)) await importEntry(db, { profileId, store, userId }, file, entry, report);
  }
}

async function importEntry(
  db: Db,
  scope: { profileId: string; store: MemoryStore; userId: string },
  file: string,
  entry: string,
  report: KnowledgeReport,
): Promise<void> {
  const what = `${file}: ${entry.slice(0, 60)}`;
  const threat = scanForInjection(entry);
  if (threat !== undefined) {
    report.memory.skipped.push({ what, why: `looks like prompt injection (${threat})` });
    return;
  }
  const result = await db.transaction().execute(async (trx) => {
    const before = await writeMemory(trx, scope, []);
    const after = await writeMemory(trx, scope, [{ action: 'add', content: entry }]);
    return { before: before.state.entries.length, after };
  });
  if (!result.after.ok) report.memory.skipped.push({ what, why: result.after.error });
  else if (result.after.state.entries.length === result.before) report.memory.alreadyThere += 1;
  else report.memory.imported += 1;
}

/** $HERMES_HOME/skills/[<category>/]<name>/SKILL.md trees; an unchanged skill gets no new version. */
export async function importHermesSkills(db: Db, home: string, profileId: string, report: KnowledgeReport): Promise<void> {
  let bundles: SkillBundle[];
  try {
    bundles = await readSkillTree(join(home, 'skills'));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return;
    throw error;
  }
  for (const bundle of bundles) await importSkill(db, profileId, bundle, report);
}

async function importSkill(db: Db, profileId: string, bundle: SkillBundle, report: KnowledgeReport): Promise<void> {
  const text = bundle.files[SKILL_MD] === undefined ? undefined : skillText(bundle.files[SKILL_MD]);
  const parsed = text === undefined ? undefined : parseSkillMd(text);
  if (parsed === undefined || !parsed.ok) {
    report.skills.skipped.push({ what: 'a skill folder', why: parsed?.error ?? 'SKILL.md is not UTF-8 text' });
    return;
  }
  const name = parsed.meta.name;
  const current = await readSkillFiles(db, profileId, name);
  if (current !== undefined && sameFiles(current, bundle.files)) {
    report.skills.alreadyThere.push(name);
    return;
  }
  const result = await importSkills(db, profileId, [bundle], { author: 'import:hermes', scan: scanForInjection });
  if (result.ok) report.skills.imported.push(name);
  else report.skills.skipped.push({ what: name, why: result.error });
}

function sameFiles(current: Map<string, Buffer>, files: Record<string, Buffer>): boolean {
  const paths = Object.keys(files);
  return paths.length === current.size && paths.every((path) => current.get(path)?.equals(files[path]!) === true);
}
