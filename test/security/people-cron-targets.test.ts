import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

const exec = promisify(execFile);

/**
 * Where a cron job may deliver (issue 39, point 3; libs/cron/src/cron-target-rule.ts): a person
 * names only chats they take part in (the chat they create it from, chats they wrote in, their
 * own DM); the operator's DM, a group they never wrote in or a webhook is refused at creation
 * with a clear message, through the cronjob tool, the API and the CLI alike. An operator names any.
 */

const SECRET = 'people-cron-targets_1';
const ALICE = { id: 61, username: 'alice' };
const OPERATOR = { id: 19, username: 'ops' };
const ALICE_GROUP = -100_610;
const OTHER_GROUP = -100_611;
const REFUSED = /is not a chat you take part in/;

describe('cron delivery targets a person may name', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({
      handler: (request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return { text: `tool said: ${last.content}` };
        const match = /cronjob: (\{.*\})/s.exec(request.lastUserText);
        if (match?.[1]) return { toolCalls: [{ name: 'cronjob', arguments: JSON.parse(match[1]) as Record<string, unknown> }] };
        return { text: `echo: ${request.lastUserText}` };
      },
    });
    telegram = await startFakeTelegram();
    stack = await startStack({ model: llm, env: { ...openChatsEnv(SECRET, telegram), HERALD_OPERATORS: `telegram:${OPERATOR.id}` } });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const ask = async (chatId: number, from: { id: number; username: string }, text: string) => {
    const group = chatId < 0;
    const seen = telegram.botMessages(chatId).length;
    const update = telegram.userMessage({ chatId, chatType: group ? 'group' : 'private', from, text: group ? `@${telegram.bot.username} ${text}` : text, mentionBot: group });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
    return waitFor(async () => telegram.botMessages(chatId)[seen]?.text, { what: `the answer to ${text}` });
  };
  const cronjob = async (chatId: number, from: { id: number; username: string }, args: Record<string, unknown>) => {
    const answer = await ask(chatId, from, `cronjob: ${JSON.stringify(args)}`);
    return JSON.parse(answer.replace(/^tool said: /, '')) as { success: boolean; error?: string; job?: { deliver: string[] } };
  };
  const jobsOf = (userId: string) => stack.database.db.selectFrom('cron_jobs').select(['name', 'targets']).where('creator_user_id', '=', userId).orderBy('created_at').execute();

  beforeAll(async () => {
    expect(await ask(ALICE_GROUP, ALICE, 'hello group')).toBe('echo: hello group');
    expect(await ask(OPERATOR.id, OPERATOR, 'hello from the operator')).toBe('echo: hello from the operator');
  });

  it('the cronjob tool refuses the operator DM and a group the person never wrote in, and takes their own chats', async () => {
    for (const deliver of [`telegram:${OPERATOR.id}`, `telegram:${OTHER_GROUP}`, `telegram:${ALICE_GROUP},telegram:${OPERATOR.id}`, 'webhook:https://collector.example.net/x']) {
      const refused = await cronjob(ALICE.id, ALICE, { action: 'create', prompt: 'post the notice', schedule: 'every 1d', name: 'sneaky', deliver });
      expect(refused.success).toBe(false);
      expect(refused.error).toMatch(REFUSED);
      expect(refused.error).toMatch(/needs an operator/);
    }
    expect(await jobsOf(`telegram:${ALICE.id}`)).toEqual([]);

    const own = await cronjob(ALICE.id, ALICE, { action: 'create', prompt: 'remind me', schedule: 'every 1d', name: 'mine', deliver: `origin,telegram:${ALICE_GROUP}` });
    expect(own).toMatchObject({ success: true, job: { deliver: [`telegram:${ALICE.id}`, `telegram:${ALICE_GROUP}`] } });
    // Changing a job is held to the same rule.
    const jobId = (await stack.database.db.selectFrom('cron_jobs').select('id').where('name', '=', 'mine').executeTakeFirstOrThrow()).id;
    const moved = await cronjob(ALICE.id, ALICE, { action: 'update', job_id: jobId, deliver: `telegram:${OPERATOR.id}` });
    expect(moved.success).toBe(false);
    expect(moved.error).toMatch(REFUSED);
    expect((await jobsOf(`telegram:${ALICE.id}`)).map((job) => job.targets)).toEqual([
      [
        { platform: 'telegram', chatId: String(ALICE.id) },
        { platform: 'telegram', chatId: String(ALICE_GROUP) },
      ],
    ]);

    // An operator may deliver anywhere.
    const anywhere = await cronjob(OPERATOR.id, OPERATOR, { action: 'create', prompt: 'status', schedule: 'every 1d', name: 'ops', deliver: `telegram:${OTHER_GROUP}` });
    expect(anywhere).toMatchObject({ success: true, job: { deliver: [`telegram:${OTHER_GROUP}`] } });
  });

  it('the API refuses the same targets with a 400 naming deliver, on create and on change', async () => {
    const body = { user_id: `telegram:${ALICE.id}`, prompt: 'post it', schedule: 'every 1d' };
    for (const deliver of [`telegram:${OPERATOR.id}`, `telegram:${OTHER_GROUP}`, 'webhook:https://collector.example.net/x']) {
      const refused = await stack.post('/v1/cron/jobs', { ...body, deliver });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request', field: 'deliver', message: expect.stringMatching(REFUSED) });
    }
    // Her own DM (even before she writes in it through this route) and the group she wrote in.
    const created = await stack.post('/v1/cron/jobs', { ...body, deliver: `telegram:${ALICE.id},telegram:${ALICE_GROUP}` });
    expect(created.status).toBe(201);
    const patched = await stack.patch(`/v1/cron/jobs/${created.body.job_id}`, { deliver: `telegram:${OPERATOR.id}` });
    expect(patched.status).toBe(400);
    expect(patched.body.error.field).toBe('deliver');
    const byOperator = await stack.post('/v1/cron/jobs', { ...body, user_id: `telegram:${OPERATOR.id}`, deliver: `telegram:${OTHER_GROUP},webhook:https://example.com/hook` });
    expect(byOperator.status).toBe(201);
  });

  it(
    'herald cron add refuses them too',
    async () => {
      const env = { ...process.env, ...stack.env, LOG_LEVEL: 'silent' };
      const cli = (...args: string[]) => exec(process.execPath, [HERALD_BIN, 'cron', 'add', '--schedule', 'every 1h', '--prompt', 'ping', ...args], { env });
      await expect(cli('--user', `telegram:${ALICE.id}`, '--deliver', `telegram:${OPERATOR.id}`)).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(REFUSED) });
      expect((await cli('--user', `telegram:${ALICE.id}`, '--deliver', `telegram:${ALICE_GROUP}`)).stdout).toMatch(/^created /);
      expect((await cli('--user', `telegram:${OPERATOR.id}`, '--deliver', `telegram:${OTHER_GROUP}`)).stdout).toMatch(/^created /);
    },
    2 * PROCESS_START_MS,
  );
});
