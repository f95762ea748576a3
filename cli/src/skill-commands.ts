import { realpath } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import {
  applySkillChange,
  getSkill,
  importSkills,
  listReviews,
  listSkills,
  readOfferedBuiltin,
  readSkillFiles,
  scanInPlace,
  setSkillPinned,
  setSkillShared,
  SKILL_MD,
  skillText,
} from '@herald/knowledge';
import type { SkillSummary } from '@herald/knowledge';
import { asActor } from '@herald/audit';
import type { Db } from '@herald/db';
import { readSkillTree, writeSkillTree } from './skill-tree.ts';
import { usageError } from './setup-error.ts';

export const SKILLS_USAGE = `herald skills [list] [--profile P]          list the profile's skills by category
herald skills show NAME [--file PATH] [--offered]
                                             print SKILL.md (or a supporting file) and the file list;
                                             --offered: the newer built-in version kept beside an edited copy
herald skills remove NAME                    delete a skill from the profile (a built-in one is not seeded again)
herald skills export DIR                     write every skill as DIR/<name>/SKILL.md + references/ ... (agentskills.io layout)
herald skills import DIR                     import DIR/<name>/SKILL.md trees (or DIR itself if it holds SKILL.md), all or nothing
herald skills pin NAME | unpin NAME          a pinned skill cannot be changed by background review
herald skills share NAME | unshare NAME      show a person's skill to everyone in the profile, or take it back to its owner
herald reviews [--session ID] [--limit N]    list background reviews and what they saved`;

function fail(message: string): never {
  throw usageError(message, SKILLS_USAGE);
}

type SkillValues = ReturnType<typeof parseSkillArgs>['values'];

function parseSkillArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      profile: { type: 'string', default: 'main' },
      file: { type: 'string' },
      offered: { type: 'boolean', default: false },
      session: { type: 'string' },
      limit: { type: 'string', default: '20' },
    },
    allowPositionals: true,
  });
}

const out = (text: string) => process.stdout.write(`${text}\n`);

async function showReviews(db: Db, values: SkillValues): Promise<void> {
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
}

/** Where a skill came from: the profile's own (who made it), or Herald's built-in and its state. */
export function originOf(skill: SkillSummary): string {
  if (skill.builtin === null) return skill.createdBy;
  const { version, edited, offeredVersion } = skill.builtin;
  const offer = offeredVersion === null ? '' : `, built-in v${offeredVersion} offered: herald skills show ${skill.name} --offered`;
  return `builtin v${version}${edited ? ', edited' : ''}${offer}`;
}

async function listByCategory(db: Db, profileId: string): Promise<void> {
  const skills = await listSkills(db, profileId);
  if (skills.length === 0) out(`no skills in profile ${profileId}`);
  let category: string | null | undefined;
  for (const skill of skills) {
    if (skill.category !== category) out(`${skill.category ?? '(no category)'}:`);
    category = skill.category;
    out(`  ${skill.name}${skill.pinned ? ' [pinned]' : ''} v${skill.version} (${originOf(skill)}): ${skill.description}`);
  }
}

async function showOffered(db: Db, profileId: string, name: string, file: string | undefined): Promise<void> {
  const offered = (await readOfferedBuiltin(db, profileId, name)) ?? fail(`skill ${name} in profile ${profileId} has no newer built-in version offered`);
  const content = offered.files.get(file ?? SKILL_MD) ?? fail(`the offered version of ${name} has no file ${file ?? SKILL_MD}`);
  out(skillText(content) ?? `(binary file, ${content.length} bytes)`);
  out(`--- built-in ${name} v${offered.version}, offered beside the profile's edited copy; files: ${[...offered.files.keys()].join(', ')}`);
}

async function removeSkill(db: Db, profileId: string, name: string): Promise<void> {
  const result = await db.transaction().execute((trx) => applySkillChange(trx, profileId, { action: 'delete', name }, { origin: 'person', author: 'cli', scan: scanInPlace }));
  if (!result.ok) fail(result.error);
  out(`removed ${name} from profile ${profileId} (its versions are kept)`);
}

async function showSkill(db: Db, profileId: string, name: string, file: string | undefined): Promise<void> {
  const skill = await getSkill(db, profileId, name);
  const files = await readSkillFiles(db, profileId, name);
  if (!skill || !files) fail(`no skill ${name} in profile ${profileId}`);
  const content = files.get(file ?? SKILL_MD) ?? fail(`skill ${name} has no file ${file ?? SKILL_MD}`);
  out(skillText(content) ?? `(binary file, ${content.length} bytes)`);
  out(`--- ${name} v${skill.version}${skill.pinned ? ' [pinned]' : ''}, created by ${skill.createdBy}; files: ${[...files.keys()].join(', ')}`);
}

async function importTree(db: Db, profileId: string, dir: string): Promise<void> {
  // The folder the person names may be a link; links inside it are not followed.
  const { bundles, skipped } = await readSkillTree(await realpath(dir).catch(() => dir));
  if (skipped.length > 0) {
    process.stderr.write(`herald: import refused, nothing was imported:\n${skipped.map((s) => `  ${s.what}: ${s.why}\n`).join('')}`);
    process.exitCode = 1;
    return;
  }
  if (bundles.length === 0) fail(`no SKILL.md found in ${dir} or its subdirectories`);
  const result = await importSkills(db, profileId, bundles, { author: 'cli', scan: scanInPlace });
  if (!result.ok) {
    process.stderr.write(`herald: import refused, nothing was imported: ${result.error}\n`);
    process.exitCode = 1;
    return;
  }
  for (const skill of result.skills) out(`${skill.message} (v${skill.version})`);
}

/** The operator at the shell shares a skill; the audit trail records it with 'cli' as the actor. */
async function setShared(db: Db, profileId: string, name: string, shared: boolean): Promise<void> {
  if (!(await asActor(db, 'cli', (trx) => setSkillShared(trx, profileId, name, shared)))) fail(`no skill ${name} in profile ${profileId}`);
  out(`${shared ? 'shared' : 'unshared'} ${name}`);
}

async function setPinned(db: Db, profileId: string, name: string, pinned: boolean): Promise<void> {
  if (!(await setSkillPinned(db, profileId, name, pinned))) fail(`no skill ${name} in profile ${profileId}`);
  out(`${pinned ? 'pinned' : 'unpinned'} ${name}`);
}

async function runSkillAction(db: Db, positionals: string[], values: SkillValues): Promise<void> {
  const profileId = values.profile ?? 'main';
  const [action = 'list', argument] = positionals;
  switch (action) {
    case 'list':
      return listByCategory(db, profileId);
    case 'show':
      if (values.offered) return showOffered(db, profileId, argument ?? fail('skills show needs a skill name'), values.file);
      return showSkill(db, profileId, argument ?? fail('skills show needs a skill name'), values.file);
    case 'remove':
      return removeSkill(db, profileId, argument ?? fail('skills remove needs a skill name'));
    case 'export': {
      const dir = argument ?? fail('skills export needs a directory');
      out(`exported ${await writeSkillTree(db, profileId, dir)} skills to ${dir}`);
      return;
    }
    case 'import':
      return importTree(db, profileId, argument ?? fail('skills import needs a directory'));
    case 'share':
    case 'unshare':
      return setShared(db, profileId, argument ?? fail(`skills ${action} needs a skill name`), action === 'share');
    case 'pin':
    case 'unpin':
      return setPinned(db, profileId, argument ?? fail(`skills ${action} needs a skill name`), action === 'pin');
    default:
      fail(`unknown skills action '${action}'`);
  }
}

/** Skill and review commands; like `herald memory`, they read and write Postgres directly. */
export async function runSkillCommand(command: 'skills' | 'reviews', argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseSkillArgs(argv);
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    if (command === 'reviews') await showReviews(db, values);
    else await runSkillAction(db, positionals, values);
  } finally {
    await db.destroy();
  }
}
