import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySkillChange, loadBuiltinSkills, scanForInjection, seedBuiltinSkills } from '@herald/knowledge';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeHandler, FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { CHILD_PROMPT_MARK } from './support/delegating-model.ts';
import { isSummaryRequest, longText, summariserThatKeeps } from './support/long-chat.ts';

// Three models on three fake servers: the deployment's (HERALD_MODEL) and two named providers
// that two profiles point at. Each answers with its own name, so a reply shows which model ran.
const KEYS = { FAST_KEY: 'sk-fast-secret-1', STRONG_KEY: 'sk-strong-secret-2' };

function providersFile(fast: FakeLLM, strong: FakeLLM): string {
  const path = join(mkdtempSync(join(tmpdir(), 'herald-profiles-')), 'providers.yaml');
  writeFileSync(
    path,
    [
      'providers:',
      '  fast:',
      '    type: openai',
      `    base_url: ${fast.url}`,
      '    api_key_env: FAST_KEY',
      '  strong:',
      '    type: anthropic',
      `    base_url: ${strong.url}`,
      '    api_key_env: STRONG_KEY',
      '',
    ].join('\n'),
  );
  return path;
}

/** Answers as `name` (model and identity included); children and summaries as such; delegates on `delegate:`. */
function answeringAs(name: string): FakeHandler {
  return (request: FakeRequest) => {
    if (isSummaryRequest(request)) return summariserThatKeeps(request, /codename/i);
    if (request.system.includes(CHILD_PROMPT_MARK)) return { text: `${name} child (${String(request.body.model)}) did it` };
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return { text: `${name} got: ${last.content.slice(0, 200)}` };
    if (request.lastUserText.startsWith('delegate: ')) return { toolCalls: [{ name: 'delegate_task', arguments: { goal: request.lastUserText.slice(10) } }] };
    const identity = /I am ([A-Za-z]+)/.exec(request.system)?.[1] ?? 'nobody';
    return { text: `${name} (${String(request.body.model)}) as ${identity}: ${request.lastUserText.slice(0, 40)}` };
  };
}

describe('profiles: managed, each with its own models', () => {
  let base: FakeLLM;
  let fast: FakeLLM;
  let strong: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    base = await startFakeOpenAI({ handler: answeringAs('base') });
    fast = await startFakeOpenAI({ handler: answeringAs('fast') });
    strong = await startFakeAnthropic({ handler: answeringAs('strong') });
    stack = await startStack({ model: base, env: { ...KEYS, HERALD_PROVIDERS_FILE: providersFile(fast, strong) } });
  });
  afterAll(async () => {
    await stack.stop();
    await fast.close();
    await strong.close();
  });

  const send = async (profile: string | undefined, chat: string, text: string) => {
    const response = await stack.post('/v1/messages?wait=60', { chat_id: chat, user_id: 'alice', text, ...(profile ? { profile } : {}) });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { session_id: string; reply: { text: string } };
  };

  it('refuses bad names (400 naming name) and a taken one (409)', async () => {
    for (const name of ['Ops', 'ops_team', '-ops', 'a'.repeat(41), '', 'ops/x']) {
      const response = await stack.post('/v1/profiles', { name });
      expect(response.status, name).toBe(400);
      expect(response.body.error.field).toBe('name');
    }
    expect((await stack.post('/v1/profiles', { name: 'a'.repeat(40) })).status).toBe(201);
    expect((await stack.post('/v1/profiles', { name: 'main' })).status).toBe(409);
    const from = await stack.post('/v1/profiles', { name: 'copy-of-nothing', from: 'nope' });
    expect(from.status).toBe(400);
    expect(from.body.error.field).toBe('from');
  });

  it('answers each profile with its own model and identity; an unknown profile is a 400 naming profile', async () => {
    for (const name of ['ops', 'research']) expect((await stack.post('/v1/profiles', { name })).status).toBe(201);
    await stack.patch('/v1/profiles/ops', { identity: 'I am Opsy, terse.', model: { primary: 'fast/gpt-ops' } });
    const patched = await stack.patch('/v1/profiles/research', {
      identity: 'I am Sage, thorough.',
      model: { primary: 'strong/claude-research', fallbacks: ['fast/gpt-ops'], context_tokens: 200_000 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.model).toEqual({ primary: 'strong/claude-research', fallbacks: ['fast/gpt-ops'], context_tokens: 200_000 });

    expect((await send('ops', 'c-1', 'disk usage?')).reply.text).toBe('fast (gpt-ops) as Opsy: disk usage?');
    expect((await send('research', 'c-1', 'survey please')).reply.text).toBe('strong (claude-research) as Sage: survey please');
    expect((await send(undefined, 'c-1', 'hello')).reply.text).toBe('base (gpt-test) as nobody: hello');
    // Each session's prompt names the model it runs on.
    expect(fast.requests.at(-1)?.system).toContain('fast/gpt-ops');
    expect(strong.requests.at(-1)?.system).toContain('strong/claude-research');

    const unknown = await stack.post('/v1/messages', { chat_id: 'c-1', user_id: 'alice', text: 'hi', profile: 'ghost' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.field).toBe('profile');

    const listed = (await stack.get('/v1/profiles')).body.profiles;
    expect(listed.find((p: any) => p.name === 'ops')).toMatchObject({ profile: 'ops', model: { primary: 'fast/gpt-ops' }, bindings: [] });
    expect(listed.find((p: any) => p.profile === 'main')).toMatchObject({ model: null });
  });

  it('checks models against the declared providers and never shows a key', async () => {
    const bad = await stack.patch('/v1/profiles/ops', { model: { primary: 'fast/gpt-ops', fallbacks: ['nowhere/gpt-x'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('model.fallbacks[0]');
    const malformed = await stack.patch('/v1/profiles/ops', { model: { primary: 'gpt-without-provider' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.field).toBe('model.primary');
    const shown = await stack.get('/v1/profiles/research');
    expect(shown.body.model.primary).toBe('strong/claude-research');
    const text = JSON.stringify(shown.body) + JSON.stringify((await stack.get('/v1/profiles')).body);
    for (const secret of Object.values(KEYS)) expect(text).not.toContain(secret);
  });

  it("runs a profile's delegate_task children on its delegation model, and a change reaches the next turn", async () => {
    await stack.patch('/v1/profiles/research', { model: { primary: 'strong/claude-research', delegation: 'fast/gpt-child' } });
    const sent = await stack.post('/v1/messages', { chat_id: 'c-2', user_id: 'alice', text: 'delegate: count the zeppelins', profile: 'research' });
    const reply = await stack.waitForEvent(sent.body.event_id, 60_000);
    expect(reply.reply.text).toMatch(/^strong got: .*fast child \(gpt-child\) did it/s);
    // Back to no model of its own: the deployment's answers.
    await stack.patch('/v1/profiles/research', { model: null });
    expect((await send('research', 'c-3', 'who now?')).reply.text).toBe('base (gpt-test) as Sage: who now?');
  });

  it("compresses a profile's sessions with its summary model at its context_tokens", async () => {
    await stack.patch('/v1/profiles/ops', { model: { primary: 'fast/gpt-ops', summary: 'strong/claude-summary', context_tokens: 20_000 } });
    /** Sends turns of 6000 characters until the session moves to a compressed child (or `max` turns). */
    const chat = async (profile: string | undefined, chatId: string, max: number) => {
      const sessions: string[] = [];
      for (let turn = 1; turn <= max && new Set(sessions).size < 2; turn++) {
        sessions.push((await send(profile, chatId, `turn ${turn}: my codename ZEPHYR. ${longText(`question ${turn}`, 6000)}`)).session_id);
      }
      return sessions;
    };
    const ops = await chat('ops', 'c-4', 16);
    // Past 85% of its 20,000 tokens the session was compressed into a child before a turn.
    expect(new Set(ops).size).toBe(2);
    const summaries = strong.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(0);
    expect(new Set(summaries.map((request) => request.body.model))).toEqual(new Set(['claude-summary']));
    expect(fast.requests.some(isSummaryRequest)).toBe(false);
    expect(base.requests.some(isSummaryRequest)).toBe(false);
    // The same turns to main (no context_tokens of its own: the model's 128k) stay in one session.
    const main = await chat(undefined, 'c-4', ops.length);
    expect(new Set(main).size).toBe(1);
  });

  it('creates a copy --from with identity, documents, tools, hooks, skills and models, never memory', async () => {
    const db = stack.database.db;
    await stack.put('/v1/profiles/ops/documents/AGENTS.md', { content: 'Check the runbook first.' });
    await stack.patch('/v1/profiles/ops', { tool_policy: { enabled: ['safe', 'terminal'] }, model: { primary: 'fast/gpt-ops' } });
    await db
      .insertInto('profile_hooks')
      .values({ profile_id: 'ops', hooks: JSON.stringify([{ name: 'audit', event: 'post_tool_call', url: 'https://hooks.example/x' }]) })
      .execute();
    await db
      .insertInto('skill_blobs')
      .values({ sha256: 'a'.repeat(64), content: Buffer.from('# runbook') })
      .execute();
    await db.insertInto('skills').values({ profile_id: 'ops', name: 'runbook', version: 1, description: 'how to', created_by: 'person' }).execute();
    await db
      .insertInto('skill_versions')
      .values({ profile_id: 'ops', name: 'runbook', version: 1, files: JSON.stringify({ 'SKILL.md': 'a'.repeat(64) }), action: 'create', author: 'api' })
      .execute();
    await db.insertInto('memory_entries').values({ profile_id: 'ops', store: 'memory', user_id: '', content: 'ops secret note' }).execute();

    const created = await stack.post('/v1/profiles', { name: 'ops-two', from: 'ops' });
    expect(created.status).toBe(201);
    const copy = (await stack.get('/v1/profiles/ops-two')).body;
    expect(copy.identity).toBe('I am Opsy, terse.');
    expect(copy.tool_policy).toEqual({ enabled: ['safe', 'terminal'] });
    expect(copy.model).toEqual({ primary: 'fast/gpt-ops' });
    expect(copy.documents.map((d: any) => [d.name, d.content])).toEqual([['AGENTS.md', 'Check the runbook first.']]);
    expect((await stack.get('/v1/profiles/ops-two/hooks')).body.hooks).toEqual([{ name: 'audit', event: 'post_tool_call', url: 'https://hooks.example/x' }]);
    const skills = await db.selectFrom('skill_versions').select(['name', 'version', 'files']).where('profile_id', '=', 'ops-two').where('name', '=', 'runbook').execute();
    expect(skills).toEqual([{ name: 'runbook', version: 1, files: { 'SKILL.md': 'a'.repeat(64) } }]);
    expect(await db.selectFrom('memory_entries').select('id').where('profile_id', '=', 'ops-two').execute()).toEqual([]);
    expect(await db.selectFrom('sessions').select('id').where('profile_id', '=', 'ops-two').execute()).toEqual([]);
    expect((await send('ops-two', 'c-5', 'copy?')).reply.text).toBe('fast (gpt-ops) as Opsy: copy?');
  });

  it("gives a profile created at runtime Herald's built-in skills at once, and a copy keeps them built-ins", async () => {
    const builtins = (await loadBuiltinSkills()).map((skill) => skill.name).sort();
    const listed = async (profile: string) => (await stack.get(`/v1/profiles/${profile}/skills`)).body.skills as Array<{ name: string; origin: string; builtin: unknown }>;
    expect((await stack.post('/v1/profiles', { name: 'skilled' })).status).toBe(201);
    const fresh = await listed('skilled');
    expect(fresh.map((skill) => skill.name).sort()).toEqual(builtins);
    for (const skill of fresh) expect(skill).toMatchObject({ origin: 'builtin', builtin: { version: expect.any(Number), edited: false, offered_version: null } });

    // The profile edits one built-in and removes another; its copy keeps both choices.
    const edit = { action: 'patch' as const, name: 'incident-triage', old_string: '# Incident triage', new_string: '# Incident triage (our runbook)' };
    const change = (name: string, action: Parameters<typeof applySkillChange>[2]) =>
      stack.database.db.transaction().execute((trx) => applySkillChange(trx, name, action, { origin: 'person', author: 'api', scan: scanForInjection }));
    expect((await change('skilled', edit)).ok).toBe(true);
    expect((await change('skilled', { action: 'delete', name: 'delegating-tasks' })).ok).toBe(true);
    expect((await stack.post('/v1/profiles', { name: 'skilled-copy', from: 'skilled' })).status).toBe(201);
    const copy = await listed('skilled-copy');
    expect(copy.map((skill) => skill.name).sort()).toEqual(builtins.filter((name) => name !== 'delegating-tasks'));
    for (const skill of copy) expect(skill.origin, skill.name).toBe('builtin');
    expect(copy.find((skill) => skill.name === 'incident-triage')?.builtin).toMatchObject({ edited: true });
    expect(copy.find((skill) => skill.name === 'cron-jobs')?.builtin).toMatchObject({ edited: false });
    // Seeding at the next migrate or upgrade sees built-ins, and the removed one stays removed.
    expect(await seedBuiltinSkills(stack.database.db, await loadBuiltinSkills(), ['skilled-copy'])).toMatchObject({ added: 0, own: 0, removed: 1 });
  });

  it('deletes softly: sessions stay readable, new messages are refused, main is kept', async () => {
    const before = await send('ops-two', 'c-6', 'last words');
    const job = await stack.post('/v1/cron/jobs', { user_id: 'alice', profile: 'ops-two', prompt: 'tidy up', schedule: 'every 1h', deliver: 'local' });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const refused = await stack.delete('/v1/profiles/main');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/main/);
    expect((await stack.delete('/v1/profiles/ops-two')).status).toBe(200);
    expect((await stack.delete('/v1/profiles/ops-two')).status).toBe(404);
    expect((await stack.get('/v1/profiles')).body.profiles.map((p: any) => p.profile)).not.toContain('ops-two');
    // Its cron jobs stop with it (libs/cron's pauseProfileJobs, in the deletion's transaction) and stay listed.
    expect((await stack.get(`/v1/cron/jobs/${job.body.job_id}`)).body).toMatchObject({ enabled: false, paused_reason: 'profile deleted' });

    const after = await stack.post('/v1/messages', { chat_id: 'c-6', user_id: 'alice', text: 'still there?', profile: 'ops-two' });
    expect(after.status).toBe(400);
    expect(after.body.error.field).toBe('profile');
    const session = await stack.get(`/v1/sessions/${before.session_id}`);
    expect(session.status).toBe(200);
    const transcript = await stack.get(`/v1/sessions/${before.session_id}/messages`);
    expect(JSON.stringify(transcript.body)).toContain('last words');
    const shown = await stack.get('/v1/profiles/ops-two');
    expect(shown.body.deleted_at).toEqual(expect.any(String));
    expect((await stack.patch('/v1/profiles/ops-two', { identity: 'revived' })).status).toBe(409);
    expect((await stack.post('/v1/profiles', { name: 'ops-two' })).status).toBe(409);
  });
});
