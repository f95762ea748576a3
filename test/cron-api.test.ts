import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduledRunFor } from '@herald/cron';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const exec = promisify(execFile);

describe('cron jobs through the API, the CLI and the cronjob tool', () => {
  let llm: FakeLLM;
  let stack: Stack;
  const toolResults: string[] = [];

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    // A model that calls cronjob with the JSON written after "cronjob:" in the message, then
    // reports the tool's answer.
    llm.handler = (request: FakeRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') {
        toolResults.push(last.content);
        return { text: `tool said: ${last.content}` };
      }
      const match = /cronjob: (\{.*\})/s.exec(request.lastUserText);
      if (match?.[1]) return { toolCalls: [{ name: 'cronjob', arguments: JSON.parse(match[1]) as Record<string, unknown> }] };
      return { text: 'done' };
    };
    stack = await startStack({
      scheduler: true,
      model: llm,
      // u1 is an operator: its jobs may deliver to chats it never wrote in (test/security/people-cron-targets.test.ts).
      env: { HERALD_SCHEDULER_TICK_MS: '100', HERALD_OPERATORS: 'api:u1' },
    });
  });

  afterAll(async () => {
    await stack.stop();
  });

  it.each([
    [{ prompt: 'x', schedule: 'every 5s' }, 'schedule', /at least 1 minute/],
    [{ prompt: 'x', schedule: '0 9 * * *', timezone: 'Europe/Nowhere' }, 'timezone', /unknown time zone/],
    [{ prompt: 'x', schedule: '99 9 * * *' }, 'schedule', /invalid cron expression/],
    [{ prompt: 'x', schedule: 'every 1h', deliver: 'matrix:1' }, 'deliver', /unknown delivery target/],
    [{ prompt: 'x', schedule: 'every 1h', deliver: 'origin' }, 'deliver', /no chat to deliver to/],
    [{ prompt: ' ', schedule: 'every 1h' }, 'prompt', /must not be empty/],
    [{ schedule: 'every 1h' }, 'prompt', /is required/],
    [{ prompt: 'x', schedule: 'every 1h', missed_policy: 'always' }, 'missed_policy', /./],
    [{ prompt: 'x', schedule: 'every 1h', skills: ['bad name!'] }, 'skills', /not a valid name/],
    [{ prompt: 'x', schedule: 'every 1h', profile: 'nobody' }, 'profile', /no profile 'nobody'/],
  ])('refuses %j with a 400 naming %s', async (body, field, message) => {
    const response = await stack.post('/v1/cron/jobs', { user_id: 'u1', ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.field).toBe(field);
    expect(response.body.error.message).toMatch(message);
  });

  it('runs a job with its own toolsets, narrowed for unattended use', async () => {
    const created = await stack.post('/v1/cron/jobs', { user_id: 'u1', prompt: 'tidy up', schedule: 'every 1h', toolsets: ['todo', 'clarify'], deliver: 'local' });
    expect(created.status).toBe(201);
    const before = llm.requests.length;
    expect((await stack.post(`/v1/cron/jobs/${created.body.job_id ?? created.body.id}/run`, {})).status).toBeLessThan(300);
    const request = await waitFor(async () => llm.requests.slice(before).find((r) => r.lastUserText.includes('tidy up')), { what: 'the scheduled run' });
    // The job's toolsets replace the platform default; clarify is never offered to an unattended run.
    expect(request.toolNames).toEqual(['todo']);
  });

  it('creates, lists, updates, pauses, resumes and removes a job', async () => {
    const created = await stack.post('/v1/cron/jobs', {
      user_id: 'u1',
      name: 'morning',
      prompt: 'summarise the news',
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      skills: ['news'],
      toolsets: ['web'],
      session: 'newsroom',
      deliver: 'telegram:-100:7, webhook:https://example.com/hook',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'morning',
      schedule_kind: 'cron',
      timezone: 'Europe/Berlin',
      session_mode: 'named',
      session: 'newsroom',
      skills: ['news'],
      toolsets: ['web'],
      deliver: ['telegram:-100:7', 'webhook:https://example.com/hook'],
      state: 'scheduled',
      missed_policy: 'run_once',
    });
    // 09:00 in Berlin is 08:00 UTC in winter.
    expect(created.body.next_run_at).toMatch(/T08:00:00\.000Z$/);
    const id = created.body.job_id as string;

    expect((await stack.get('/v1/cron/jobs?user_id=u1')).body.jobs.map((job: any) => job.job_id)).toContain(id);
    expect((await stack.get('/v1/cron/jobs?user_id=someone-else')).body.jobs).toEqual([]);

    const patched = await stack.patch(`/v1/cron/jobs/${id}`, { schedule: 'every 2h', missed_policy: 'skip' });
    expect(patched.body).toMatchObject({ schedule: 'every 2h', schedule_kind: 'interval', missed_policy: 'skip' });
    expect((await stack.patch(`/v1/cron/jobs/${id}`, { schedule: 'whenever' })).body.error.field).toBe('schedule');
    expect((await stack.patch(`/v1/cron/jobs/${id}`, { enabled: false })).body).toMatchObject({ state: 'paused', enabled: false });
    expect((await stack.patch(`/v1/cron/jobs/${id}`, { enabled: true })).body).toMatchObject({ state: 'scheduled' });
    expect((await stack.delete(`/v1/cron/jobs/${id}`)).status).toBe(204);
    expect((await stack.get(`/v1/cron/jobs/${id}`)).status).toBe(404);
    // A malformed id is a 400 naming it (issue 17); a well-formed unknown one the 404 above.
    expect((await stack.get('/v1/cron/jobs/not-a-uuid/runs')).body.error).toMatchObject({ code: 'invalid_request', field: 'id' });
  });

  it('the cronjob tool acts for the person it talks to, and is refused inside a scheduled run', async () => {
    const ask = async (user: string, args: Record<string, unknown>) => {
      const response = await stack.post('/v1/messages?wait=30', { chat_id: `chat-${user}`, user_id: user, text: `cronjob: ${JSON.stringify(args)}` });
      expect(response.status).toBe(200);
      return JSON.parse(toolResults[toolResults.length - 1] ?? '{}');
    };
    const created = await ask('alice', { action: 'create', prompt: 'cronjob: {"action":"list"}', schedule: 'every 1d', name: 'nested' });
    expect(created).toMatchObject({ success: true, job: { name: 'nested', deliver: ['local'], state: 'scheduled', session: 'fresh' } });
    const jobId = created.job.job_id as string;
    const row = await stack.database.db.selectFrom('cron_jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ profile_id: 'main', creator_user_id: 'api:alice', origin: { platform: 'api', chatId: 'chat-alice' } });

    expect((await ask('alice', { action: 'list' })).jobs.map((job: any) => job.job_id)).toEqual([jobId]);
    // Someone else cannot see or touch it.
    expect((await ask('bob', { action: 'list' })).jobs).toEqual([]);
    expect(await ask('bob', { action: 'pause', job_id: jobId })).toMatchObject({ success: false, error: expect.stringMatching(/no job/) });
    expect(await ask('alice', { action: 'create', prompt: 'x', schedule: 'every 5s' })).toMatchObject({
      success: false,
      error: expect.stringMatching(/^schedule: an interval must be at least 1 minute/),
    });

    // The job's own prompt tries cronjob again: a scheduled run may not create or change jobs.
    const run = await ask('alice', { action: 'run', job_id: jobId });
    expect(run).toMatchObject({ success: true, run_id: expect.any(String) });
    const finished = await waitFor(
      async () => {
        const runs = (await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs;
        return runs[0]?.status === 'succeeded' ? runs[0] : undefined;
      },
      { what: 'the scheduled run' },
    );
    expect(finished.output).toMatch(/Tool 'cronjob' is not permitted here \(it is not enabled for this cron run/);
    const event = await stack.database.db.selectFrom('inbound_events').select(['platform', 'user_id', 'text']).where('dedupe_key', '=', `cron:${finished.run_id}`).executeTakeFirstOrThrow();
    expect(event).toMatchObject({ platform: 'cron', user_id: 'api:alice' });
    expect(event.text).toMatch(/^\[IMPORTANT: You are running as the scheduled job "nested"/);
    expect((await ask('alice', { action: 'remove', job_id: jobId })).success).toBe(true);
  });

  it('a named session is kept across runs, a fresh one is new per run, and runs carry their toolsets', async () => {
    const named = (await stack.post('/v1/cron/jobs', { user_id: 'dave', prompt: 'standup', schedule: 'every 1d', session: 'standup', toolsets: ['web'] })).body;
    const fresh = (await stack.post('/v1/cron/jobs', { user_id: 'dave', prompt: 'standup too', schedule: 'every 1d' })).body;
    const sessions = new Map<string, string[]>();
    for (const job of [named, fresh]) {
      for (let i = 0; i < 2; i++) {
        const runId = (await stack.post(`/v1/cron/jobs/${job.job_id}/run`, {})).body.run_id as string;
        const run = await waitFor(
          async () => {
            const found = (await stack.get(`/v1/cron/jobs/${job.job_id}/runs`)).body.runs.find((r: any) => r.run_id === runId);
            return found?.status === 'succeeded' ? found : undefined;
          },
          { what: `run ${i} of ${job.name}` },
        );
        sessions.set(job.job_id, [...(sessions.get(job.job_id) ?? []), run.session_id]);
      }
    }
    expect(new Set(sessions.get(named.job_id)).size).toBe(1);
    expect(new Set(sessions.get(fresh.job_id)).size).toBe(2);
    const transcript = (await stack.get(`/v1/sessions/${sessions.get(named.job_id)?.[0]}/messages`)).body.messages;
    expect(transcript.filter((m: any) => m.role === 'user')).toHaveLength(2);
    const event = await stack.database.db.selectFrom('cron_runs').select('event_id').where('job_id', '=', named.job_id).executeTakeFirstOrThrow();
    expect(await scheduledRunFor(stack.database.db, event.event_id ?? '')).toMatchObject({ jobId: named.job_id, toolsets: ['web'] });
  });

  it(
    'herald cron adds, lists, runs and shows run history',
    async () => {
      const env = { ...process.env, ...stack.env, LOG_LEVEL: 'silent' };
      const cli = (...args: string[]) => exec(process.execPath, [HERALD_BIN, 'cron', ...args], { env });
      const added = await cli('add', '--user', 'carol', '--schedule', 'every 1h', '--prompt', 'ping', '--name', 'pinger');
      const id = /created ([0-9a-f-]{36})/.exec(added.stdout)?.[1] ?? '';
      expect(id).not.toBe('');
      expect((await cli('list', '--user', 'carol')).stdout).toMatch(new RegExp(`${id}  scheduled .*"every 1h" UTC  -> local  pinger`));
      await expect(cli('add', '--user', 'carol', '--schedule', 'sometimes', '--prompt', 'x')).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/schedule: cannot read the schedule 'sometimes'/),
      });
      expect((await cli('run', id)).stdout).toMatch(/requested run/);
      await waitFor(async () => /succeeded/.test((await cli('runs', id)).stdout), { what: 'the CLI run', timeoutMs: 90_000 });
      expect((await cli('runs', id)).stdout).toMatch(/manual {2}succeeded {2}\d+\.\ds\n {4}output: done/);
      expect((await cli('pause', id)).stdout).toMatch(/paused .* paused \(paused by an operator\)/);
      expect((await cli('remove', id)).stdout).toMatch(`removed ${id}`);
    },
    3 * PROCESS_START_MS,
  );
});
