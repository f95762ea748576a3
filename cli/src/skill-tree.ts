import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { listSkills, readSkillFiles, SKILL_MD, SKILL_SUPPORT_DIRS } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { SkillBundle } from '@herald/knowledge';

// Skills on disk in the agentskills.io layout: <name>/SKILL.md plus its support folders.

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function filesUnder(root: string, dir: string, into: Record<string, Buffer>): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await filesUnder(root, path, into);
    else if (entry.isFile()) into[relative(root, path).split(sep).join('/')] = await readFile(path);
  }
}

/** One skill directory: SKILL.md plus whatever sits in the four support folders; the rest is skipped. */
async function readSkillDir(dir: string): Promise<SkillBundle> {
  const files: Record<string, Buffer> = { [SKILL_MD]: await readFile(join(dir, SKILL_MD)) };
  for (const folder of SKILL_SUPPORT_DIRS) {
    if (await exists(join(dir, folder))) await filesUnder(dir, join(dir, folder), files);
  }
  return { files };
}

/** DIR itself when it holds SKILL.md; else its skill subfolders, and one level of category folders. */
export async function readSkillTree(root: string): Promise<SkillBundle[]> {
  if (await exists(join(root, SKILL_MD))) return [await readSkillDir(root)];
  const bundles: SkillBundle[] = [];
  for (const entry of (await readdir(root, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = join(root, entry.name);
    if (await exists(join(dir, SKILL_MD))) {
      bundles.push(await readSkillDir(dir));
      continue;
    }
    for (const inner of await readdir(dir, { withFileTypes: true })) {
      if (inner.isDirectory() && (await exists(join(dir, inner.name, SKILL_MD)))) bundles.push(await readSkillDir(join(dir, inner.name)));
    }
  }
  return bundles;
}

export async function writeSkillTree(db: Db, profileId: string, root: string): Promise<number> {
  const skills = await listSkills(db, profileId);
  for (const skill of skills) {
    const files = (await readSkillFiles(db, profileId, skill.name)) ?? new Map<string, Buffer>();
    for (const [path, content] of files) {
      const target = join(root, skill.name, ...path.split('/'));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
  }
  return skills.length;
}
