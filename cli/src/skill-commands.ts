import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { scanForInjection } from '@herald/knowledge';
import { createDb } from '@herald/db';
import { getSkill, importSkills, listReviews, listSkills, readSkillFiles, setSkillPinned, SKILL_MD, SKILL_SUPPORT_DIRS, skillText } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { SkillBundle } from '@herald/knowledge';

const USAGE = `herald skills [list] [--profile P]          list the profile's skills by category
herald skills show NAME [--file PATH]        print SKILL.md (or a supporting file) and the file list
herald skills export DIR                     write every skill as DIR/<name>/SKILL.md + references/ ... (agentskills.io layout)
herald skills import DIR                     import DIR/<name>/SKILL.md trees (or DIR itself if it holds SKILL.md), all or nothing
herald skills pin NAME | unpin NAME          a pinned skill cannot be changed by background review
herald reviews [--session ID] [--limit N]    list background reviews and what they saved`;

function fail(message: string): never {
  process.stderr.write(`herald: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

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

/** Skill and review commands; like `herald memory`, they read and write Postgres directly. */
export async function runSkillCommand(command: string, argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      profile: { type: 'string', default: 'main' },
      file: { type: 'string' },
      session: { type: 'string' },
      limit: { type: 'string', default: '20' },
    },
    allowPositionals: true,
  });
  const profileId = values.profile ?? 'main';
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    if (command === 'reviews') {
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) fail('--limit must be a whole number from 1 to 1000');
      const reviews = await listReviews(db, { sessionId: values.session, limit });
      if (reviews.length === 0) out('no reviews yet');
      for (const review of reviews) {
        out(`${review.id}  ${review.status}  ${review.kinds.join('+')}  session ${review.session_id}  attempts ${review.attempts}  ${review.created_at}`);
        for (const action of review.actions as Record<string, unknown>[]) out(`    saved: ${JSON.stringify(action)}`);
        if (review.summary) out(`    summary: ${review.summary}`);
        if (review.error) out(`    error: ${review.error}`);
      }
      return;
    }
    const [action = 'list', ...rest] = positionals;
    switch (action) {
      case 'list': {
        const skills = await listSkills(db, profileId);
        if (skills.length === 0) out(`no skills in profile ${profileId}`);
        let category: string | null | undefined;
        for (const skill of skills) {
          if (skill.category !== category) out(`${skill.category ?? '(no category)'}:`);
          category = skill.category;
          out(`  ${skill.name}${skill.pinned ? ' [pinned]' : ''} v${skill.version}: ${skill.description}`);
        }
        return;
      }
      case 'show': {
        const name = rest[0] ?? fail('skills show needs a skill name');
        const skill = await getSkill(db, profileId, name);
        const files = await readSkillFiles(db, profileId, name);
        if (!skill || !files) fail(`no skill ${name} in profile ${profileId}`);
        const content = files.get(values.file ?? SKILL_MD) ?? fail(`skill ${name} has no file ${values.file ?? SKILL_MD}`);
        out(skillText(content) ?? `(binary file, ${content.length} bytes)`);
        out(`--- ${name} v${skill.version}${skill.pinned ? ' [pinned]' : ''}, created by ${skill.createdBy}; files: ${[...files.keys()].join(', ')}`);
        return;
      }
      case 'export': {
        const dir = rest[0] ?? fail('skills export needs a directory');
        out(`exported ${await writeSkillTree(db, profileId, dir)} skills to ${dir}`);
        return;
      }
      case 'import': {
        const dir = rest[0] ?? fail('skills import needs a directory');
        const bundles = await readSkillTree(dir);
        if (bundles.length === 0) fail(`no SKILL.md found in ${dir} or its subdirectories`);
        const result = await importSkills(db, profileId, bundles, { author: 'cli', scan: scanForInjection });
        if (!result.ok) {
          process.stderr.write(`herald: import refused, nothing was imported: ${result.error}\n`);
          process.exitCode = 1;
          return;
        }
        for (const skill of result.skills) out(`${skill.message} (v${skill.version})`);
        return;
      }
      case 'pin':
      case 'unpin': {
        const name = rest[0] ?? fail(`skills ${action} needs a skill name`);
        if (!(await setSkillPinned(db, profileId, name, action === 'pin'))) fail(`no skill ${name} in profile ${profileId}`);
        out(`${action === 'pin' ? 'pinned' : 'unpinned'} ${name}`);
        return;
      }
      default:
        fail(`unknown skills action '${action}'`);
    }
  } finally {
    await db.destroy();
  }
}
