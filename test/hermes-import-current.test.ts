import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { importHermesHome } from '../cli/src/import-command.ts';
import type { ImportReport } from '../cli/src/import-command.ts';
import { currentHermesHome, PROMPT, T0 } from './support/hermes-fixture.ts';
import type { FixtureHome } from './support/hermes-fixture.ts';
import { useTestDatabase } from './support/use-test-database.ts';

// A home laid out as upstream Hermes writes it today, imported into a fresh Herald.

describe('herald import hermes: a current Hermes home', () => {
  const database = useTestDatabase();
  let fixture: FixtureHome;
  let report: ImportReport;
  beforeAll(async () => {
    fixture = await currentHermesHome();
    report = await importHermesHome(loadConfig({ DATABASE_URL: database.url }), fixture.home, { profileId: 'main', userId: 'api:u1' });
  });
  afterAll(async () => {
    await rm(fixture.home, { recursive: true, force: true });
    await rm(fixture.outside, { recursive: true, force: true });
  });

  it('keeps titles, end reasons, models, usage, reasoning, message ids and prompts stored by hash', async () => {
    const sessions = await database.db
      .selectFrom('sessions')
      .select(['session_key', 'title', 'model', 'end_reason', 'imported_end_reason', 'ended_at', 'end_hooks_fired_at', 'system_prompt', 'imported_usage', 'chat_type', 'thread_id'])
      .orderBy('created_at')
      .execute();
    expect(sessions.map((s) => [s.session_key, s.title, s.model, s.end_reason, s.imported_end_reason])).toEqual([
      ['hermes:20261001_090000_a1', 'Deploy planning', 'anthropic/claude-sonnet-4', 'compression', 'compression'],
      ['hermes:20261001_100000_b2', 'Deploy planning #2', 'anthropic/claude-sonnet-4', null, 'agent_close'],
      ['hermes:20261002_090000_c3', 'Compacted in place', null, null, null],
    ]);
    expect(sessions[0]!.system_prompt).toBe(PROMPT);
    expect(sessions[2]!.system_prompt).toBe('A different prompt.');
    expect(sessions[0]!.ended_at).toEqual(new Date((T0 + 1800) * 1000));
    // An ending that happened in Hermes is history: on_session_end does not fire for it again.
    expect(sessions[0]!.end_hooks_fired_at).toEqual(sessions[0]!.ended_at);
    expect(sessions[0]!.imported_usage).toMatchObject({ input_tokens: 1200, output_tokens: 340, estimated_cost_usd: 0.0123 });
    expect([sessions[0]!.chat_type, sessions[0]!.thread_id]).toEqual(['group', '17']);
    const messages = await database.db.selectFrom('messages').select(['content', 'reasoning', 'platform_message_id']).orderBy('session_id').orderBy('seq').execute();
    expect(messages.find((m) => m.platform_message_id === '9001')?.content).toBe('Our staging cluster is called marigold.');
    expect(messages.find((m) => m.content === 'Noted: staging is marigold.')?.reasoning).toBe('The person named the cluster.');
  });

  it('stores a multimodal message as readable text and replays an in-place compaction as Hermes does', async () => {
    const contents = (await database.db.selectFrom('messages').select('content').execute()).map((m) => m.content);
    expect(contents).toContain('What is in this photo? \u{1F600}\n[image: image/png]');
    expect(contents.some((c) => c.startsWith('json:'))).toBe(false);
    expect(contents.filter((c) => c.startsWith('old turn'))).toEqual([]);
    expect(report.history?.messages.skipped).toEqual({ 'archived by an in-place compaction (Hermes replays the summary, not these)': 6 });
    expect(report.history?.multimodalAsText).toBe(1);
    expect(report.summary.messages).toMatchObject({ imported: 8, unchanged: 0, skipped: 6 });
  });

  it('lists the fields Herald has no place for, with a count', () => {
    expect(report.unplaced).toMatchObject({ 'sessions.cwd': 1, 'messages.token_count': 1, 'cron/jobs.json model': 1, 'cron/jobs.json workdir': 1, 'cron/jobs.json repeat.times': 1 });
  });

  it('imports real skills whole, with every front matter field, their folders and nested categories', async () => {
    expect(report.knowledge.skills.imported.sort()).toEqual(['github-pr-workflow', 'google-workspace', 'serving-llms-vllm']);
    const skills = await database.db.selectFrom('skills').select(['name', 'category', 'tags', 'description']).orderBy('name').execute();
    expect(skills.map((s) => [s.name, s.category])).toEqual([
      ['github-pr-workflow', 'github'],
      ['google-workspace', 'productivity'],
      ['serving-llms-vllm', 'mlops/inference'],
    ]);
    expect(skills[2]!.description).toBe('Serve large language models with vLLM: throughput tuning, tensor parallelism and an OpenAI-compatible server.');
    expect(skills[1]!.tags).toEqual(['Google', 'Gmail', 'Calendar']);
    const vllm = await database.db.selectFrom('skill_versions').select('files').where('name', '=', 'serving-llms-vllm').executeTakeFirstOrThrow();
    expect(Object.keys(vllm.files).sort()).toEqual(['SKILL.md', 'assets/logo.png', 'templates/serve.yaml']);
    const github = await database.db.selectFrom('skill_versions').select('files').where('name', '=', 'github-pr-workflow').executeTakeFirstOrThrow();
    expect(Object.keys(github.files).sort()).toEqual(['SKILL.md', 'references/api.md', 'scripts/open_pr.sh']);
  });

  it('names every skipped skill by path, with the line of a broken quote or an attack', () => {
    const skipped = Object.fromEntries(report.knowledge.skills.skipped.map((s) => [s.what.slice(fixture.home.length + 1), s.why]));
    expect(skipped['skills/devops/deploy-notes/SKILL.md']).toMatch(/invalid frontmatter: line \d+/);
    expect(skipped['skills/devops/helpful-notes']).toMatch(/SKILL\.md was refused by the security scan \(secret exfiltration, line 8\)/);
    expect(skipped['skills/devops/formatting']).toMatch(/instruction override, line 6/);
    expect(skipped['skills/devops/leaky']).toMatch(/references: is a symbolic link/);
    expect(skipped['skills/devops/linked']).toMatch(/key\.md: is a hard link/);
    expect(report.summary.skills).toMatchObject({ imported: 3, unchanged: 0, skipped: 5 });
  });

  it('never copies what a link points at', async () => {
    const blobs = await database.db.selectFrom('skill_blobs').select('content').execute();
    expect(blobs.some((b) => b.content.toString().includes('PRIVATE KEY'))).toBe(false);
    expect(await database.db.selectFrom('skills').select('name').where('name', 'in', ['leaky', 'linked']).execute()).toEqual([]);
  });

  it('brings cron jobs with null fields, the home time zone, the group topic origin and the pause reason', async () => {
    expect(report.cron.imported).toEqual(['morning briefing', 'weekly review']);
    expect(report.cron.skipped).toEqual([{ what: 'disk check', why: 'runs a Hermes script; Herald runs prompts only' }]);
    expect(report.timezone).toEqual({ zone: 'Asia/Tokyo', from: 'config.yaml' });
    const jobs = await database.db.selectFrom('cron_jobs').select(['name', 'timezone', 'origin', 'targets', 'enabled', 'paused_reason', 'skills', 'next_run_at']).orderBy('name').execute();
    const briefing = jobs[0]!;
    expect(briefing.timezone).toBe('Asia/Tokyo');
    expect(briefing.origin).toEqual({ platform: 'telegram', chatType: 'group', chatId: '-1001234567', threadId: '17' });
    expect(briefing.targets).toEqual([{ platform: 'telegram', chatId: '-1001234567', threadId: '17' }]);
    // 07:30 in Tokyo is 22:30 UTC.
    expect(briefing.next_run_at!.toISOString()).toMatch(/T22:30:00\.000Z$/);
    expect(jobs[1]).toMatchObject({ name: 'weekly review', enabled: false, paused_reason: 'on holiday until October', skills: ['github-pr-workflow'] });
  });

  it('counts a second run as unchanged, per kind', async () => {
    const again = await importHermesHome(loadConfig({ DATABASE_URL: database.url }), fixture.home, { profileId: 'main', userId: 'api:u1' });
    expect(again.summary.sessions).toMatchObject({ imported: 0, unchanged: 3 });
    expect(again.summary.messages).toMatchObject({ imported: 0, unchanged: 8 });
    expect(again.summary.memory).toMatchObject({ imported: 0, unchanged: 3 });
    expect(again.summary.skills).toMatchObject({ imported: 0, unchanged: 3, skipped: 5 });
    expect(again.summary.cron).toMatchObject({ imported: 0, unchanged: 2, skipped: 1 });
  });
});
