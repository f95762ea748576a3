import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySkillChange, listSkills, loadBuiltinSkills, readOfferedBuiltin, readSkillFiles, scanForInjection, seedBuiltinSkills } from '@herald/knowledge';
import { BUILTIN_SKILLS_DIR } from '../src/builtin-skills.ts';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

const REQUIRED = ['cron-jobs', 'delegating-tasks', 'finding-past-work', 'handing-over-a-chat', 'incident-triage', 'writing-skills'];

describe("Herald's built-in skills", () => {
  const database = useTestDatabase();
  let upgraded: string;
  beforeAll(async () => {
    // The next Herald release: cron-jobs and incident-triage change, version 2.
    upgraded = await mkdtemp(join(tmpdir(), 'herald-builtin-'));
    await cp(BUILTIN_SKILLS_DIR, upgraded, { recursive: true });
    for (const name of ['cron-jobs', 'incident-triage']) {
      const path = join(upgraded, name, 'SKILL.md');
      const text = (await readFile(path, 'utf8')).replace('  version: 1', '  version: 2');
      await writeFile(path, `${text}\n## New in version 2\nCheck the run history first.\n`);
    }
  });
  afterAll(() => rm(upgraded, { recursive: true, force: true }));

  it('ship the skills the issue names, valid and clean of injection', async () => {
    const skills = await loadBuiltinSkills();
    expect(skills.map((s) => s.name)).toEqual(expect.arrayContaining(REQUIRED));
    for (const skill of skills) {
      expect(skill.version).toBeGreaterThanOrEqual(1);
      expect(scanForInjection(skill.files['SKILL.md']!.toString('utf8')), skill.name).toBeUndefined();
    }
  });

  it('are seeded into a new profile, marked builtin; an upgrade updates unedited copies, keeps edited ones and offers the new version', async () => {
    const db = database.db;
    await db.insertInto('profiles').values({ id: 'fresh', display_name: 'Fresh' }).execute();
    // A profile that has its own skill by one of the names keeps it.
    const own = '---\nname: writing-skills\ndescription: Our house style for skills.\n---\nUse our template.\n';
    await db.transaction().execute((trx) => applySkillChange(trx, 'fresh', { action: 'create', name: 'writing-skills', content: own }, { origin: 'person', author: 'api', scan: scanForInjection }));

    const first = await seedBuiltinSkills(db, await loadBuiltinSkills());
    expect(first.own).toBe(1);
    const listed = await listSkills(db, 'fresh');
    for (const name of REQUIRED.filter((n) => n !== 'writing-skills')) {
      expect(listed.find((s) => s.name === name)).toMatchObject({ createdBy: 'builtin', builtin: { version: 1, edited: false, offeredVersion: null } });
    }
    expect(listed.find((s) => s.name === 'writing-skills')).toMatchObject({ createdBy: 'person', builtin: null });
    // Seeding again changes nothing.
    expect(await seedBuiltinSkills(db, await loadBuiltinSkills(), ['fresh'])).toMatchObject({ added: 0, updated: 0, current: REQUIRED.length - 1 });

    // The profile edits its incident-triage and removes delegating-tasks.
    const edit = { action: 'patch' as const, name: 'incident-triage', old_string: '# Incident triage', new_string: '# Incident triage (our runbook)' };
    expect((await db.transaction().execute((trx) => applySkillChange(trx, 'fresh', edit, { origin: 'session', author: 'session:x', scan: scanForInjection }))).ok).toBe(true);
    await db.transaction().execute((trx) => applySkillChange(trx, 'fresh', { action: 'delete', name: 'delegating-tasks' }, { origin: 'person', author: 'cli', scan: scanForInjection }));

    const second = await seedBuiltinSkills(db, await loadBuiltinSkills(upgraded), ['fresh']);
    expect(second).toMatchObject({ added: 0, updated: 1, offered: 1, removed: 1, own: 1 });
    const after = await listSkills(db, 'fresh');
    expect(after.find((s) => s.name === 'cron-jobs')?.builtin).toEqual({ version: 2, edited: false, offeredVersion: null });
    expect((await readSkillFiles(db, 'fresh', 'cron-jobs'))!.get('SKILL.md')!.toString()).toContain('New in version 2');
    expect(after.find((s) => s.name === 'incident-triage')?.builtin).toEqual({ version: 1, edited: true, offeredVersion: 2 });
    expect((await readSkillFiles(db, 'fresh', 'incident-triage'))!.get('SKILL.md')!.toString()).toContain('(our runbook)');
    const offered = await readOfferedBuiltin(db, 'fresh', 'incident-triage');
    expect(offered?.version).toBe(2);
    expect(offered?.files.get('SKILL.md')?.toString()).toContain('New in version 2');
    // Removed stays removed.
    expect(after.some((s) => s.name === 'delegating-tasks')).toBe(false);
    expect(await seedBuiltinSkills(db, await loadBuiltinSkills(upgraded), ['fresh'])).toMatchObject({ updated: 0, offered: 1, removed: 1 });
  });
});
