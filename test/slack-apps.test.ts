import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { FIRST_APP, messageEnvelope, SECOND_APP, slackSignatureHeaders, startFakeSlack, TEAM } from './support/fake-slack.ts';
import type { FakeSlack, FakeSlackApp, PostedMessage } from './support/fake-slack.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 33 point 3 and 4, with issue 31's accounts and bindings: two Slack apps in one workspace,
// the first from SLACK_BOT_TOKEN (account default), the second from HERALD_PLATFORMS_FILE (account
// second), each with its own socket, signing secret, sessions and bound profile; every answer, draft
// and report leaves through the app the conversation is on.

const ALICE = 'U0ALICE';
const FIRST_DM = 'D0FIRST';
const SECOND_DM = 'D0SECOND';
const CHANNEL = 'C0GENERAL';
const OPS_CHANNEL = 'C0OPS';

function platformsFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-slack-apps-'));
  chmodSync(dir, 0o755);
  const path = join(dir, 'platforms.yaml');
  writeFileSync(
    path,
    [
      'slack:',
      '  - account: second',
      '    token_env: SLACK_SECOND_BOT_TOKEN',
      '    app_token_env: SLACK_SECOND_APP_TOKEN',
      '    signing_secret_env: SLACK_SECOND_SIGNING_SECRET',
      "    allowed_users: ['*']",
      '',
    ].join('\n'),
  );
  return path;
}

/** Answers as the identity of the profile's prompt (`I am X`), naming what it was asked; slowly enough to be streamed as a draft. */
function answeringAsIdentity(request: FakeRequest) {
  const identity = /I am ([A-Za-z]+)/.exec(request.system)?.[1] ?? 'nobody';
  return { text: `${identity} says: ${request.lastUserText.slice(0, 200)}`, chunkDelayMs: 30 };
}

const LONG_ASK = 'hello second, tell me enough that the answer streams';

describe('several Slack apps, each an account with its own bot, socket, secret and bound profile', () => {
  let llm: FakeLLM;
  let slack: FakeSlack;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: answeringAsIdentity });
    slack = await startFakeSlack([FIRST_APP, SECOND_APP]);
    stack = await startStack({
      model: llm,
      scheduler: true,
      env: {
        ...slack.env,
        SLACK_APP_TOKEN: FIRST_APP.appToken,
        SLACK_SIGNING_SECRET: FIRST_APP.signingSecret,
        SLACK_ALLOWED_USERS: ALICE,
        SLACK_SECOND_BOT_TOKEN: SECOND_APP.botToken,
        SLACK_SECOND_APP_TOKEN: SECOND_APP.appToken,
        SLACK_SECOND_SIGNING_SECRET: SECOND_APP.signingSecret,
        HERALD_PLATFORMS_FILE: platformsFile(),
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        HERALD_OPERATORS: 'api:admin',
      },
    });
    for (const [name, identity] of [
      ['ops', 'Opsy'],
      ['research', 'Sage'],
    ] as const) {
      expect((await stack.post('/v1/profiles', { name })).status).toBe(201);
      await stack.patch(`/v1/profiles/${name}`, { identity: `I am ${identity}.` });
    }
    const bindings = [
      { platform: 'slack', account: 'second', profile: 'research' },
      // The second app in #ops answers as ops: a channel beats an account.
      { platform: 'slack', account: 'second', chat_id: OPS_CHANNEL, profile: 'ops' },
    ];
    const put = await stack.put('/v1/bindings', { bindings });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
  });
  afterAll(async () => {
    await stack?.stop();
    await slack?.close();
  });

  let tsCounter = 0;
  const userTs = () => `1800000100.${String(++tsCounter).padStart(6, '0')}`;
  const postEvent = async (event: Record<string, any>, app: FakeSlackApp, secret = app.signingSecret) => {
    const body = JSON.stringify(messageEnvelope(event, undefined, app));
    const response = await fetch(`${stack.url}/v1/slack/events`, { method: 'POST', headers: { 'content-type': 'application/json', ...slackSignatureHeaders(body, undefined, secret) }, body });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** The bot message in `channel` (and thread) whose final text matches, once delivered. */
  const answer = (channel: string, pattern: RegExp, threadTs?: string) =>
    waitFor(async () => slack.botMessages(channel, threadTs).find((message) => pattern.test(message.text)), { timeoutMs: 30_000, what: `a message matching ${pattern} in ${channel}` });
  const eventCount = async () =>
    Number(
      (
        await stack.database.db
          .selectFrom('inbound_events')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('holds one socket per app, each under its own lease', async () => {
    await waitFor(async () => (slack.openSocketsOf(FIRST_APP) === 1 && slack.openSocketsOf(SECOND_APP) === 1 ? true : undefined), { timeoutMs: 30_000, what: 'a socket per app' });
    const leases = await stack.database.db.selectFrom('platform_leases').select('name').where('name', 'like', 'slack-socket:%').orderBy('name').execute();
    expect(leases.map((lease) => lease.name)).toEqual(['slack-socket:A0FAKEAPP', 'slack-socket:A0SECOND']);
  });

  it('answers a DM to each app as its bound profile, through that app only, in sessions of their own', async () => {
    slack.pushEvent(messageEnvelope({ type: 'message', channel: FIRST_DM, channel_type: 'im', user: ALICE, text: 'hello first', ts: userTs() }, undefined, FIRST_APP), FIRST_APP);
    slack.pushEvent(messageEnvelope({ type: 'message', channel: SECOND_DM, channel_type: 'im', user: ALICE, text: LONG_ASK, ts: userTs() }, undefined, SECOND_APP), SECOND_APP);
    const first = await answer(FIRST_DM, /^nobody says: hello first$/);
    const second = await answer(SECOND_DM, new RegExp(`^Sage says: ${LONG_ASK}$`));
    // Posted with each app's own bot token; the second answer grew as a draft the second app
    // posted and then updated (Slack lets a bot update only its own messages).
    expect(first.by).toBe(FIRST_APP.botUser);
    expect(second.by).toBe(SECOND_APP.botUser);
    expect(second.edits.length).toBeGreaterThan(0);
    expect(slack.botMessages(SECOND_DM)).toHaveLength(1);
    const sessions = await stack.database.db
      .selectFrom('sessions')
      .select(['profile_id', 'session_key', 'account'])
      .where('platform', '=', 'slack')
      .where('chat_type', '=', 'dm')
      .orderBy('session_key')
      .execute();
    expect(sessions).toEqual([
      { profile_id: 'main', session_key: `agent:main:slack:dm:${FIRST_DM}`, account: 'default' },
      { profile_id: 'research', session_key: `agent:research:slack@second:dm:${SECOND_DM}`, account: 'second' },
    ]);
    // The same person on both apps: one person, two conversations.
    const people = await stack.database.db.selectFrom('sessions').select('origin_user_id').distinct().where('platform', '=', 'slack').execute();
    expect(people).toEqual([{ origin_user_id: `slack:${TEAM}:${ALICE}` }]);
  });

  it("takes Events API requests signed with the second app's secret as the second app's, and refuses a wrong secret writing nothing", async () => {
    const top = userTs();
    const mention = { type: 'app_mention', channel: OPS_CHANNEL, user: ALICE, text: `<@${SECOND_APP.botUser}> deploy status`, ts: top };
    const before = await eventCount();
    for (const secret of ['not-any-apps-secret', `${SECOND_APP.signingSecret}x`]) {
      const refused = await postEvent(mention, SECOND_APP, secret);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('unauthorized');
    }
    expect(await eventCount()).toBe(before);
    expect((await postEvent(mention, SECOND_APP)).body).toEqual({ ok: true, outcome: 'accepted' });
    // Slack retrying the delivery changes nothing.
    expect((await postEvent(mention, SECOND_APP)).body.outcome).toBe('duplicate');
    const reply = await answer(OPS_CHANNEL, /^Opsy says: deploy status$/, top);
    expect(reply.by).toBe(SECOND_APP.botUser);
    // A reply in the second app's thread needs no mention: the thread is that app's session.
    expect((await postEvent({ type: 'message', channel: OPS_CHANNEL, channel_type: 'channel', user: ALICE, text: 'and the database?', ts: userTs(), thread_ts: top }, SECOND_APP)).body.outcome).toBe(
      'accepted',
    );
    expect((await answer(OPS_CHANNEL, /^Opsy says: and the database\?$/, top)).by).toBe(SECOND_APP.botUser);
    // The same thread is not the first app's: without a mention, the first app stays out of it.
    expect((await postEvent({ type: 'message', channel: OPS_CHANNEL, channel_type: 'channel', user: ALICE, text: 'anyone?', ts: userTs(), thread_ts: top }, FIRST_APP)).body.outcome).toBe('ignored');
    // The URL check of either app is answered.
    const challenge = JSON.stringify({ token: 't', challenge: 'c-2', type: 'url_verification' });
    const verified = await fetch(`${stack.url}/v1/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...slackSignatureHeaders(challenge, undefined, SECOND_APP.signingSecret) },
      body: challenge,
    });
    expect(await verified.json()).toEqual({ challenge: 'c-2' });
  });

  it('answers a mention of the first app over the Events API through the first app', async () => {
    const top = userTs();
    expect((await postEvent({ type: 'app_mention', channel: CHANNEL, user: ALICE, text: `<@${FIRST_APP.botUser}> first here`, ts: top }, FIRST_APP)).body.outcome).toBe('accepted');
    expect((await answer(CHANNEL, /^nobody says: first here$/, top)).by).toBe(FIRST_APP.botUser);
    expect(slack.botMessages(CHANNEL, top).every((message: PostedMessage) => message.by === FIRST_APP.botUser)).toBe(true);
  });

  it('delivers a cron report to slack@second:<channel> through the second app, and refuses an unknown account when the job is saved', async () => {
    const created = await stack.post('/v1/cron/jobs', { user_id: 'admin', schedule: 'every 1d', prompt: 'weekly report', deliver: 'slack@second:C123,slack:C0FIRST' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await stack.post(`/v1/cron/jobs/${created.body.job_id}/run`, {})).status).toBe(202);
    const report = await answer('C123', /weekly report/);
    expect(report.by).toBe(SECOND_APP.botUser);
    expect((await answer('C0FIRST', /weekly report/)).by).toBe(FIRST_APP.botUser);

    const jobsBefore = (await stack.get('/v1/cron/jobs')).body.jobs.length;
    const refused = await stack.post('/v1/cron/jobs', { user_id: 'admin', schedule: 'every 1d', prompt: 'nowhere', deliver: 'slack:C1,slack@nope:C123' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.field).toBe('deliver');
    expect(refused.body.error.message).toContain("no Slack account 'nope'");
    expect(refused.body.error.message).toContain('default, second');
    expect((await stack.get('/v1/cron/jobs')).body.jobs).toHaveLength(jobsBefore);
    // Changing a job's targets is held to the same rule.
    const patched = await stack.patch(`/v1/cron/jobs/${created.body.job_id}`, { deliver: 'telegram@ops:42' });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toMatch(/no Telegram account 'ops' here \(no Telegram account is configured/);
  });
});
