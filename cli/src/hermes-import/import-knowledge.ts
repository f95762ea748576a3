import { join } from 'node:path';
import type { Transaction } from 'kysely';
import type { Database, MemoryStore } from '@herald/db';
import { applySkillChange, parseSkillMd, readSkillFiles, scanForInjection, scanInPlace, SKILL_MD, skillText, writeMemory } from '@herald/knowledge';
import type { SkillBundle } from '@herald/knowledge';
import { readRegularFile, UnsafeFileError } from '../safe-files.ts';
import type { SkillTree } from '../skill-tree.ts';

/** Hermes' entry delimiter in MEMORY.md and USER.md (tools/memory_tool.py). */
const ENTRY_DELIMITER = '\n§\n';
/** Hermes caps these files at a few thousand characters; anything far past that is not a memory file. */
export const MEMORY_FILE_MAX_BYTES = 1024 * 1024;
const MEMORY_FILES: [MemoryStore, string][] = [
  ['memory', 'MEMORY.md'],
  ['user', 'USER.md'],
];

export interface Skipped {
  what: string;
  why: string;
}

export interface KnowledgeReport {
  memory: { imported: number; alreadyThere: number; skipped: Skipped[] };
  skills: { imported: string[]; alreadyThere: string[]; skipped: Skipped[] };
}

/** A memory file as read before anything is written: its entries, or why it was not read. */
export interface MemoryFile {
  store: MemoryStore;
  file: string;
  entries: string[];
  refused?: string;
}

/** Split, strip, drop empties, dedupe keeping the first: how Hermes reads its own files. */
export function memoryEntries(text: string): string[] {
  return [
    ...new Set(
      text
        .split(ENTRY_DELIMITER)
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    ),
  ];
}

/** memories/MEMORY.md and USER.md, read safely: a link, a device or an oversized file is refused by path, unread. */
export async function readMemoryFiles(home: string): Promise<MemoryFile[]> {
  const files: MemoryFile[] = [];
  for (const [store, file] of MEMORY_FILES) {
    const path = join(home, 'memories', file);
    try {
      const bytes = await readRegularFile(path, MEMORY_FILE_MAX_BYTES);
      if (bytes !== undefined) files.push({ store, file: path, entries: memoryEntries(bytes.toString('utf8')) });
    } catch (error) {
      if (!(error instanceof UnsafeFileError)) throw error;
      files.push({ store, file: path, entries: [], refused: error.message });
    }
  }
  return files;
}

/**
 * MEMORY.md (the agent's notes) and USER.md (who the person is) become memory entries of the
 * person importing, one add at a time through the same write as the memory tool: an entry already
 * there is a no-op, one past the store's character limit or one that reads like prompt injection is
 * skipped and reported, never silently dropped.
 */
export async function importMemory(trx: Transaction<Database>, files: MemoryFile[], owner: { profileId: string; userId: string }, report: KnowledgeReport): Promise<void> {
  for (const file of files) {
    if (file.refused !== undefined) report.memory.skipped.push({ what: file.file, why: file.refused });
    for (const entry of file.entries) await importEntry(trx, { ...owner, store: file.store }, file.file, entry, report);
  }
}

async function importEntry(trx: Transaction<Database>, scope: { profileId: string; store: MemoryStore; userId: string }, file: string, entry: string, report: KnowledgeReport): Promise<void> {
  const what = `${file}: ${entry.slice(0, 60)}`;
  const threat = scanForInjection(entry);
  if (threat !== undefined) {
    report.memory.skipped.push({ what, why: `looks like prompt injection (${threat})` });
    return;
  }
  const before = await writeMemory(trx, scope, []);
  const after = await writeMemory(trx, scope, [{ action: 'add', content: entry }]);
  if (!after.ok) report.memory.skipped.push({ what, why: after.error });
  else if (after.state.entries.length === before.state.entries.length) report.memory.alreadyThere += 1;
  else report.memory.imported += 1;
}

/** $HERMES_HOME/skills/[<category>/...]<name>/SKILL.md trees; an unchanged skill gets no new version. */
export async function importHermesSkills(trx: Transaction<Database>, tree: SkillTree, profileId: string, report: KnowledgeReport): Promise<void> {
  report.skills.skipped.push(...tree.skipped);
  for (const bundle of tree.bundles) await importSkill(trx, profileId, bundle, report);
}

async function importSkill(trx: Transaction<Database>, profileId: string, bundle: SkillBundle, report: KnowledgeReport): Promise<void> {
  const where = bundle.source ?? 'a skill folder';
  const text = bundle.files[SKILL_MD] === undefined ? undefined : skillText(bundle.files[SKILL_MD]);
  const parsed = text === undefined ? undefined : parseSkillMd(text);
  if (parsed === undefined || !parsed.ok) {
    report.skills.skipped.push({ what: join(where, SKILL_MD), why: parsed?.error ?? 'SKILL.md is not UTF-8 text' });
    return;
  }
  const name = parsed.meta.name;
  const current = await readSkillFiles(trx, profileId, name);
  if (current !== undefined && sameFiles(current, bundle.files)) {
    report.skills.alreadyThere.push(name);
    return;
  }
  const result = await applySkillChange(trx, profileId, { action: 'import', name, files: bundle.files, category: bundle.category }, { origin: 'import', author: 'import:hermes', scan: scanInPlace });
  if (result.ok) report.skills.imported.push(name);
  else report.skills.skipped.push({ what: where, why: result.error });
}

function sameFiles(current: Map<string, Buffer>, files: Record<string, Buffer>): boolean {
  const paths = Object.keys(files);
  return paths.length === current.size && paths.every((path) => current.get(path)?.equals(files[path]!) === true);
}
