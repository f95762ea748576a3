import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { REVIEW_DEAD_LETTER_QUEUE, sendReviewJob } from '@herald/knowledge';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startHeraldProcess, startStack, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';

const INSTRUCTION = '[Background review]';

function isReview(request: FakeRequest): boolean {
  return request.messages.some((m) => m.role === 'user' && m.content.startsWith(INSTRUCTION));
}

/** The messages after the review instruction: 0 on the review's first call, 2 after one tool round... */
function afterInstruction(request: FakeRequest) {
  const at = request.messages.findIndex((m) => m.role === 'user' && m.content.startsWith(INSTRUCTION));
  return request.messages.slice(at + 1);
}

const prefixOf = (request: FakeRequest) => JSON.stringify([(request.body as any).messages[0], (request.body as any).tools]);

async function reviewsOf(stack: Stack, sessionId: string): Promise<any[]> {
  return (await stack.get(`/v1/reviews?session_id=${sessionId}`)).body.reviews;
}

async function waitForReview(stack: Stack, sessionId: string, timeoutMs = 30_000): Promise<any> {
  return waitFor(
    async () => {
      const [review] = await reviewsOf(stack, sessionId);
      return review?.status === 'done' || review?.status === 'failed' ? review : undefined;
    },
    { timeoutMs, what: `review of session ${sessionId}` },
  );
}

describe('background review in process', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({
      reviewers: 1,
      env: {
        HERALD_MODEL: 'openai/gpt-test',
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: 'sk-test',
        HERALD_PROVIDER_MAX_RETRIES: '0',
        HERALD_REVIEW_MAX_ATTEMPTS: '2',
        HERALD_REVIEW_RETRY_BASE_MS: '50',
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await fake.close();
  });

  it('saves a memory fact after the trigger, refuses terminal, reuses the prompt bytes and leaves the transcript alone', async () => {
    expect((await stack.patch('/v1/profiles/main', { memory_review_interval: 2, skill_review_interval: 0 })).status).toBe(200);
    fake.handler = (request) => {
      if (!isReview(request)) return { text: `ok ${request.lastUserText}` };
      const after = afterInstruction(request);
      if (after.length === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo pwned > pwned.txt' } }] };
      if (after.length === 2) {
        return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'user', content: 'Ada measures in metric units' } }] };
      }
      return { text: 'Saved the unit preference.' };
    };
    const first = await stack.post('/v1/messages?wait=30', { chat_id: 'rev-memory', user_id: 'ada', text: 'Please use metric units' });
    const sessionId = first.body.session_id as string;
    // The event is recorded just after the reply; one user turn is not enough for a review.
    await waitFor(
      async () => (await stack.database.db.selectFrom('review_counters').select('user_turns_since_memory').where('session_id', '=', sessionId).executeTakeFirst())?.user_turns_since_memory === 1,
      { what: 'the first turn counted' },
    );
    expect(await reviewsOf(stack, sessionId)).toEqual([]);
    await stack.post('/v1/messages?wait=30', { chat_id: 'rev-memory', user_id: 'ada', text: 'thanks' });

    const review = await waitForReview(stack, sessionId);
    expect(review).toMatchObject({
      status: 'done',
      kinds: ['memory'],
      attempts: 1,
      actions: [{ tool: 'memory', action: 'add', target: 'user', content: 'Ada measures in metric units' }],
      summary: 'Saved the unit preference.',
    });
    expect((await stack.get(`/v1/reviews/${review.id}`)).body.id).toBe(review.id);
    const user = (await stack.get('/v1/profiles/main/users/ada/memory')).body;
    expect(user.entries.map((e: any) => e.content)).toEqual(['Ada measures in metric units']);

    // The terminal call was refused with a tool error and never ran.
    const reviewRequests = fake.requests.filter((r) => r.sessionKey === sessionId && isReview(r));
    expect(reviewRequests).toHaveLength(3);
    const refusal = afterInstruction(reviewRequests[1]!).find((m) => m.role === 'tool');
    expect(refusal?.content).toMatch(/Tool 'terminal' is not available in background review/);
    expect(existsSync(join(stack.config.tools.workspaceRoot, 'main', sessionId, 'pwned.txt'))).toBe(false);

    // Each of the review's three model calls is stored as the review's, for the reviewed turn's person.
    const calls = await sql<{ kind: string; user_id: string; turn_id: string }>`
      SELECT kind, user_id, turn_id FROM model_calls WHERE session_id = ${sessionId}::uuid ORDER BY id`.execute(stack.database.db);
    const reviewed = (await stack.database.db.selectFrom('reviews').select('turn_id').where('id', '=', review.id).executeTakeFirstOrThrow()).turn_id;
    expect(calls.rows.map((call) => call.kind)).toEqual(['turn', 'turn', 'review', 'review', 'review']);
    for (const call of calls.rows.slice(2)) expect(call).toEqual({ kind: 'review', user_id: 'api:ada', turn_id: reviewed });

    // The person's transcript holds the two turns and nothing of the review.
    const transcript = await stack.database.db.selectFrom('messages').select(['role', 'content']).where('session_id', '=', sessionId).orderBy('seq').execute();
    expect(transcript.map((m) => m.content)).toEqual(['Please use metric units', 'ok Please use metric units', 'thanks', 'ok thanks']);

    // Same system prompt and tool definitions bytes, and the session's whole request as a prefix.
    const sessionRequests = fake.requests.filter((r) => r.sessionKey === sessionId && !isReview(r));
    expect(new Set([...sessionRequests, ...reviewRequests].map(prefixOf)).size).toBe(1);
    expect((reviewRequests[0]!.body as any).tools.map((t: any) => t.function.name)).toContain('terminal');
    const lastSession = (sessionRequests[sessionRequests.length - 1]!.body as any).messages as unknown[];
    expect(((reviewRequests[0]!.body as any).messages as unknown[]).slice(0, lastSession.length)).toEqual(lastSession);
  }, 60_000);

  it('counts failed turns but never reviews after one', async () => {
    await stack.patch('/v1/profiles/main', { memory_review_interval: 1, skill_review_interval: 0 });
    fake.handler = (request) => (isReview(request) ? { text: 'Nothing to save.' } : { text: 'fine' });
    fake.script({ error: { status: 400 } });
    const failed = await stack.post('/v1/messages?wait=30', { chat_id: 'rev-failed', user_id: 'bob', text: 'hello' });
    const sessionId = failed.body.session_id as string;
    await waitFor(
      async () => (await stack.database.db.selectFrom('review_counters').select('user_turns_since_memory').where('session_id', '=', sessionId).executeTakeFirst())?.user_turns_since_memory === 1,
      { what: 'the failed turn counted' },
    );
    expect(await reviewsOf(stack, sessionId)).toEqual([]);
    await stack.post('/v1/messages?wait=30', { chat_id: 'rev-failed', user_id: 'bob', text: 'again' });
    const review = await waitForReview(stack, sessionId);
    expect(review).toMatchObject({ status: 'done', actions: [], summary: 'Nothing to save.' });
    expect((await stack.database.db.selectFrom('reviews').select('user_turns').where('id', '=', review.id).executeTakeFirst())?.user_turns).toBe(2);
  }, 60_000);

  it('retries a failing review with backoff, then records it as failed; replies are unaffected', async () => {
    await stack.patch('/v1/profiles/main', { memory_review_interval: 1, skill_review_interval: 0 });
    fake.handler = (request) => (isReview(request) ? { error: { status: 500 } } : { text: 'still answering' });
    const turn = await stack.post('/v1/messages?wait=30', { chat_id: 'rev-broken', user_id: 'cy', text: 'hi' });
    expect(turn.body.reply.text).toBe('still answering');
    const sessionId = turn.body.session_id as string;
    const review = await waitForReview(stack, sessionId);
    expect(review).toMatchObject({ status: 'failed', attempts: 2, actions: [] });
    expect(review.error).toMatch(/model call failed \(HTTP 500\)/);
    expect(fake.requests.filter((r) => r.sessionKey === sessionId && isReview(r))).toHaveLength(2);
    // Its job ran out of attempts and went to the dead-letter queue, where an operator sees it.
    await waitFor(
      async () => {
        const dead = await sql<{ data: { reviewId: string } }>`SELECT data FROM pgboss.job WHERE name = ${REVIEW_DEAD_LETTER_QUEUE}`.execute(stack.database.db);
        return dead.rows.some((row) => row.data.reviewId === review.id);
      },
      { what: 'the review in the dead-letter queue' },
    );
    await stack.patch('/v1/profiles/main', { memory_review_interval: 0 });
    const next = await stack.post('/v1/messages?wait=30', { chat_id: 'rev-broken', user_id: 'cy', text: 'and now?' });
    expect(next.body.reply.text).toBe('still answering');
  }, 60_000);

  it('patches the existing skill instead of creating a duplicate, viewing it first', async () => {
    await stack.patch('/v1/profiles/main', { memory_review_interval: 0, skill_review_interval: 2 });
    const skillMd = '---\nname: deploy-checklist\ndescription: Steps to deploy the web service.\ncategory: devops\n---\n1. Run the tests.\n2. Deploy.\n';
    const badImport = await stack.post('/v1/profiles/main/skills/_import', { skills: [{ files: { 'SKILL.md': skillMd, '../escape.md': 'x' } }] });
    expect(badImport.status).toBe(400);
    expect(badImport.body.error.field).toBe('skills.0');
    const imported = await stack.post('/v1/profiles/main/skills/_import', {
      skills: [{ files: { 'SKILL.md': skillMd, 'references/rollback.md': 'Roll back to the previous tag.' } }],
    });
    expect(imported.status).toBe(200);

    const review: Record<number, object> = {
      0: { toolCalls: [{ name: 'skill_manage', arguments: { action: 'patch', name: 'deploy-checklist', old_string: '2. Deploy.', new_string: '2. Migrate.\n3. Deploy.' } }] },
      2: { toolCalls: [{ name: 'skill_manage', arguments: { action: 'create', name: 'deploy-checklist', content: skillMd } }] },
      4: { toolCalls: [{ name: 'skill_view', arguments: { name: 'deploy-checklist' } }] },
      6: { toolCalls: [{ name: 'skill_manage', arguments: { action: 'patch', name: 'deploy-checklist', old_string: '2. Deploy.', new_string: '2. Run the migrations.\n3. Deploy.' } }] },
    };
    fake.handler = (request) => {
      if (isReview(request)) return (review[afterInstruction(request).length] as any) ?? { text: 'Patched deploy-checklist: migrations before deploy.' };
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user') return { toolCalls: [{ name: 'skill_view', arguments: { name: 'deploy-checklist' } }] };
      return { text: 'Deployed, after running the migrations by hand.' };
    };
    const turn = await stack.post('/v1/messages?wait=30', { chat_id: 'rev-skill', user_id: 'ada', text: 'deploy it' });
    const sessionId = turn.body.session_id as string;
    // A new session's prompt carries the skills index, not the skill's body.
    const prompt = (await stack.get(`/v1/sessions/${sessionId}`)).body.system_prompt as string;
    expect(prompt).toContain('<available_skills>\n  devops:\n    - deploy-checklist: Steps to deploy the web service.\n</available_skills>');
    expect(prompt).not.toContain('Run the tests');

    const done = await waitForReview(stack, sessionId);
    expect(done).toMatchObject({ status: 'done', kinds: ['skill'], actions: [{ tool: 'skill_manage', action: 'patch', name: 'deploy-checklist' }] });
    const reviewCalls = fake.requests.filter((r) => r.sessionKey === sessionId && isReview(r));
    const results = afterInstruction(reviewCalls[reviewCalls.length - 1]!).filter((m) => m.role === 'tool');
    expect(results[0]?.content).toMatch(/view it first: call skill_view/);
    expect(results[1]?.content).toMatch(/already exists; view it and patch it/);
    const instruction = fake.requests.find((r) => r.sessionKey === sessionId && isReview(r))?.lastUserText ?? '';
    expect(instruction).toMatch(/1\. If a skill was used in this conversation.*patch that skill/);

    const skills = (await stack.get('/v1/profiles/main/skills')).body.skills;
    expect(skills).toHaveLength(1);
    const skill = (await stack.get('/v1/profiles/main/skills/deploy-checklist')).body;
    expect(skill).toMatchObject({ version: 2, category: 'devops', created_by: 'import' });
    expect(skill.content).toContain('2. Run the migrations.\n3. Deploy.');
    expect(skill.versions.map((v: any) => [v.version, v.action, v.author.split(':')[0]])).toEqual([
      [2, 'patch', 'review'],
      [1, 'import', 'api'],
    ]);

    // Pinned: a later review may not touch it, but people still export it whole.
    expect((await stack.put('/v1/profiles/main/skills/deploy-checklist/pin', { pinned: 'yes' })).status).toBe(400);
    expect((await stack.put('/v1/profiles/main/skills/deploy-checklist/pin', { pinned: true })).body.pinned).toBe(true);
    const exported = (await stack.get('/v1/profiles/main/skills/_export')).body.skills;
    expect(Object.keys(exported[0].files)).toEqual(['SKILL.md', 'references/rollback.md']);
  }, 60_000);
});

describe('background review across reviewer processes', () => {
  let fake: FakeLLM;
  let stack: Stack;
  const processes: HeraldProcess[] = [];
  // pg-boss's maintenance every second; a review run older than 6 s counts as dead (its reviewer
  // was killed) and is run again.
  const reviewerEnv = () => ({ ...stack.env, HERALD_RECONCILE_INTERVAL_MS: '500' });
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({
      env: { HERALD_MODEL: 'openai/gpt-test', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', HERALD_REVIEW_TIMEOUT_MS: '6000' },
    });
    await stack.patch('/v1/profiles/main', { memory_review_interval: 1, skill_review_interval: 0 });
  });
  afterAll(async () => {
    for (const child of processes) {
      child.child.kill('SIGKILL');
      await child.exited;
    }
    await stack.stop();
    await fake.close();
  });

  const memoryHandler = (request: FakeRequest) => {
    if (!isReview(request)) return { text: 'noted' };
    if (afterInstruction(request).length === 0) {
      return { toolCalls: [{ name: 'memory', arguments: { action: 'add', target: 'memory', content: `fact from ${request.sessionKey}` } }] };
    }
    return { text: 'Saved one fact.' };
  };

  it('runs each review exactly once with two reviewers and repeated sends', async () => {
    fake.handler = memoryHandler;
    const sessions: string[] = [];
    for (let i = 0; i < 4; i++) {
      sessions.push((await stack.post('/v1/messages?wait=30', { chat_id: `pair-${i}`, user_id: 'ada', text: 'remember this' })).body.session_id);
    }
    const ids = await waitFor(
      async () => {
        const rows = await stack.database.db.selectFrom('reviews').select('id').where('session_id', 'in', sessions).execute();
        return rows.length === 4 ? rows.map((r) => r.id) : undefined;
      },
      { what: 'four pending reviews' },
    );
    // Sending a review's job again (a replayed completion, a starting reviewer's resend) adds
    // nothing: the job id is the review id.
    for (const id of ids) expect(await sendReviewJob(stack.database.db, id)).toBe(false);
    fake.latencyMs = 50;
    processes.push(...(await Promise.all([startHeraldProcess('reviewer', reviewerEnv()), startHeraldProcess('reviewer', reviewerEnv())])));
    for (const sessionId of sessions) expect(await waitForReview(stack, sessionId)).toMatchObject({ status: 'done', attempts: 1 });
    fake.latencyMs = 0;
    for (const sessionId of sessions) {
      const firstCalls = fake.requests.filter((r) => r.sessionKey === sessionId && isReview(r) && afterInstruction(r).length === 0);
      expect(firstCalls).toHaveLength(1);
    }
    const memory = (await stack.get('/v1/profiles/main/memory?user_id=ada')).body.entries.map((e: any) => e.content).sort();
    expect(memory).toEqual(sessions.map((id) => `fact from ${id}`).sort());
    for (const child of processes.splice(0)) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
  }, 90_000);

  it("reviews a killed reviewer's event once after restart", async () => {
    let hung = 0;
    fake.handler = (request) => {
      if (isReview(request) && afterInstruction(request).length === 0 && hung === 0) {
        hung++;
        return { hang: true };
      }
      return memoryHandler(request);
    };
    const sessionId = (await stack.post('/v1/messages?wait=30', { chat_id: 'killed', user_id: 'ada', text: 'remember this too' })).body.session_id;
    const first = await startHeraldProcess('reviewer', reviewerEnv());
    processes.push(first);
    await waitFor(async () => hung === 1, { what: 'the review call in flight' });
    first.child.kill('SIGKILL');
    await first.exited;
    const running = await stack.database.db.selectFrom('reviews').select(['status', 'attempts']).where('session_id', '=', sessionId).executeTakeFirst();
    expect(running).toEqual({ status: 'running', attempts: 1 });

    processes.push(await startHeraldProcess('reviewer', reviewerEnv()));
    const review = await waitForReview(stack, sessionId);
    expect(review).toMatchObject({ status: 'done', attempts: 2, actions: [{ tool: 'memory', content: `fact from ${sessionId}` }] });
    const memory = (await stack.get('/v1/profiles/main/memory?user_id=ada')).body.entries.map((e: any) => e.content);
    expect(memory.filter((c: string) => c === `fact from ${sessionId}`)).toHaveLength(1);
    const completed = fake.requests.filter((r) => r.sessionKey === sessionId && isReview(r) && afterInstruction(r).length === 2);
    expect(completed).toHaveLength(1);
  }, 90_000);
});
