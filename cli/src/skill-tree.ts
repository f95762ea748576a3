import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { listSkills, readSkillFiles, SKILL_FILE_MAX_BYTES, SKILL_MD, SKILL_SUPPORT_DIRS } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { SkillBundle } from '@herald/knowledge';
import { readRegularFile, UnsafeFileError } from './safe-files.ts';

// Skills on disk in the agentskills.io layout: [<category>/...]<name>/SKILL.md plus its support
// folders. Nothing in the tree is followed out of it: links, devices and oversized files are
// refused by path (safe-files.ts), and a skill with one refused file is skipped whole.

/** How deep category folders may nest (Hermes: `mlops/inference/vllm` is two). */
const MAX_CATEGORY_DEPTH = 4;
/** Files per skill and bytes per skill, checked before reading the next one. */
const MAX_FILES = 500;
const MAX_SKILL_BYTES = 20 * 1024 * 1024;

export interface SkillTree {
  bundles: SkillBundle[];
  /** Skill folders not read, by path, with the reason. */
  skipped: { what: string; why: string }[];
}

interface Budget {
  files: number;
  bytes: number;
}

async function isDirectory(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info?.isDirectory() === true;
}

async function hasSkillMd(dir: string): Promise<boolean> {
  return (await lstat(join(dir, SKILL_MD)).catch(() => undefined)) !== undefined;
}

async function readInto(skillDir: string, path: string, files: Record<string, Buffer>, budget: Budget): Promise<void> {
  const content = await readRegularFile(path, SKILL_FILE_MAX_BYTES);
  if (content === undefined) throw new UnsafeFileError(path, 'disappeared while reading');
  budget.files += 1;
  budget.bytes += content.length;
  if (budget.files > MAX_FILES) throw new UnsafeFileError(skillDir, `holds more than ${MAX_FILES} files`);
  if (budget.bytes > MAX_SKILL_BYTES) throw new UnsafeFileError(skillDir, `holds more than ${MAX_SKILL_BYTES} bytes`);
  files[relative(skillDir, path).split(sep).join('/')] = content;
}

async function filesUnder(skillDir: string, dir: string, files: Record<string, Buffer>, budget: Budget): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) throw new UnsafeFileError(path, 'is a symbolic link; links are not followed');
    if (entry.isDirectory()) await filesUnder(skillDir, path, files, budget);
    else await readInto(skillDir, path, files, budget);
  }
}

/** One skill directory: SKILL.md plus whatever sits in the four support folders; the rest is left out. */
async function readSkillDir(dir: string, category: string | undefined): Promise<SkillBundle> {
  const budget: Budget = { files: 0, bytes: 0 };
  const files: Record<string, Buffer> = {};
  await readInto(dir, join(dir, SKILL_MD), files, budget);
  for (const folder of SKILL_SUPPORT_DIRS) {
    const path = join(dir, folder);
    const info = await lstat(path).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isSymbolicLink()) throw new UnsafeFileError(path, 'is a symbolic link; links are not followed');
    if (info.isDirectory()) await filesUnder(dir, path, files, budget);
  }
  return { files, category, source: dir };
}

async function readOne(dir: string, category: string | undefined, tree: SkillTree): Promise<void> {
  try {
    tree.bundles.push(await readSkillDir(dir, category));
  } catch (error) {
    if (!(error instanceof UnsafeFileError)) throw error;
    tree.skipped.push({ what: dir, why: error.message });
  }
}

async function walk(root: string, dir: string, depth: number, tree: SkillTree): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      tree.skipped.push({ what: path, why: 'is a symbolic link; links are not followed' });
      continue;
    }
    if (!entry.isDirectory()) continue;
    const category = relative(root, dir).split(sep).join('/') || undefined;
    if (await hasSkillMd(path)) await readOne(path, category, tree);
    else if (depth < MAX_CATEGORY_DEPTH) await walk(root, path, depth + 1, tree);
  }
}

/**
 * DIR itself when it holds SKILL.md; else every skill folder under it, the folders around a skill
 * (nested too) naming its category.
 */
export async function readSkillTree(root: string): Promise<SkillTree> {
  const tree: SkillTree = { bundles: [], skipped: [] };
  if (!(await isDirectory(root))) {
    const info = await lstat(root).catch(() => undefined);
    if (info === undefined) throw Object.assign(new Error(`${root} does not exist`), { code: 'ENOENT' });
    throw new UnsafeFileError(root, 'is not a directory (links are not followed)');
  }
  if (await hasSkillMd(root)) await readOne(root, undefined, tree);
  else await walk(root, root, 0, tree);
  return tree;
}

export async function writeSkillTree(db: Db, profileId: string, root: string, options: { byCategory?: boolean } = {}): Promise<number> {
  const skills = await listSkills(db, profileId);
  for (const skill of skills) {
    const files = (await readSkillFiles(db, profileId, skill.name)) ?? new Map<string, Buffer>();
    const folder = options.byCategory && skill.category ? [...skill.category.split('/'), skill.name] : [skill.name];
    for (const [path, content] of files) {
      const target = join(root, ...folder, ...path.split('/'));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
  }
  return skills.length;
}
