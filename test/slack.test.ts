import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InFlightPart } from '@herald/db';
import { DeliveryError } from '@herald/delivery';
import type { OutboundDelivery } from '@herald/delivery';
import { DRAFT_CURSOR } from '@herald/platforms';
import { markdownToSlackMrkdwn, SlackSender, slackWebClient } from '@herald/platforms/slack';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { BOT_ID, BOT_TOKEN, BOT_USER, buttonPayload, messageEnvelope, SIGNING_SECRET, slackSignatureHeaders, startFakeSlack, TEAM } from './support/fake-slack.ts';
import type { FakeSlack, PostedMessage } from './support/fake-slack.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const DM = 'D0ALICE';
const CHANNEL = 'C0GENERAL';
const OPS_CHANNEL = 'C0OPS';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The user messages' image parts the fake model received (OpenAI's image_url data URLs). */
function imageUrls(request: FakeRequest): string[] {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  return messages.flatMap((message) =>
    message.role === 'user' && Array.isArray(message.content)
      ? (message.content as { type: string; image_url?: { url: string } }[]).filter((part) => part.type === 'image_url').map((part) => part.image_url?.url ?? '')
      : [],
  );
}

describe('Slack over the Events API, end to end: the official clients against a fake Slack', () => {
  let llm: FakeLLM;
  let slack: FakeSlack;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    slack = await startFakeSlack();
    stack = await startStack({
      model: llm,
      testTools: true,
      env: {
        ...slack.env,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_ALLOWED_USERS: `${ALICE},${BOB},${CAROL}`,
        HERALD_DELIVERY_POLL_MS: '100',
        // Streamed drafts are tested on their own below; here every answer arrives as plain messages.
        HERALD_STREAMING_SLACK: 'off',
        HERALD_MODEL_VISION: 'on',
        // Alice runs this deployment (she may set the home chat); Bob is only allowed to talk.
        HERALD_OPERATORS: `api:42,slack:${TEAM}:${ALICE}`,
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await slack.close();
  });

  /** A request to a Slack route, signed as Slack would (or with the headers given). */
  const post = async (path: string, body: string, headers: Record<string, string> = slackSignatureHeaders(body), contentType = 'application/json') => {
    const response = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
    return { status: response.status, body: (await response.json()) as any };
  };
  const postEvent = (event: Record<string, any>, eventId?: string, extra: Record<string, string> = {}) => {
    const body = JSON.stringify(messageEnvelope(event, eventId));
    return post('/v1/slack/events', body, { ...slackSignatureHeaders(body), ...extra });
  };
  const pressButton = (payload: Record<string, any>) => {
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    return post('/v1/slack/interactions', body, slackSignatureHeaders(body), 'application/x-www-form-urlencoded');
  };
  const eventCount = async () =>
    Number(
      (
        await stack.database.db
          .selectFrom('inbound_events')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const waitForBotMessages = (channel: string, count: number, threadTs?: string) =>
    waitFor(async () => (slack.botMessages(channel, threadTs).length >= count ? slack.botMessages(channel, threadTs) : undefined), {
      what: `${count} bot messages in ${channel}${threadTs ? ` thread ${threadTs}` : ''}`,
    });
  let tsCounter = 0;
  const userTs = () => `1800000000.${String(++tsCounter).padStart(6, '0')}`;

  it('answers the url_verification challenge, and refuses forged, unsigned and stale requests with 401, writing nothing', async () => {
    const challenge = JSON.stringify({ token: 't', challenge: 'c-123', type: 'url_verification' });
    expect(await post('/v1/slack/events', challenge)).toEqual({ status: 200, body: { challenge: 'c-123' } });
    const before = await eventCount();
    const body = JSON.stringify(messageEnvelope({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'forged', ts: userTs() }));
    const forged = await post('/v1/slack/events', body, slackSignatureHeaders(body, undefined, 'not-the-secret'));
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('unauthorized');
    expect((await post('/v1/slack/events', body, {})).status).toBe(401);
    // Correctly signed, but six minutes ago: a replay.
    const stale = await post('/v1/slack/events', body, slackSignatureHeaders(body, Math.floor(Date.now() / 1000) - 360));
    expect(stale.status).toBe(401);
    expect(stale.body.error.message).toMatch(/five minutes/);
    // Signed, then changed on the way.
    const tampered = await post('/v1/slack/events', body.replace('forged', 'tampered'), slackSignatureHeaders(body));
    expect(tampered.status).toBe(401);
    const press = `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions' }))}`;
    expect((await post('/v1/slack/interactions', press, slackSignatureHeaders(press, undefined, 'wrong'), 'application/x-www-form-urlencoded')).status).toBe(401);
    expect(await eventCount()).toBe(before);
    expect(slack.messages).toHaveLength(0);
  });

  it('answers a DM once, however often Slack retries it, with a sign of work while the turn runs', async () => {
    llm.handler = (request) => ({ text: `echo: **${request.lastUserText}**` });
    const ts = userTs();
    const event = { type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'hello &amp; welcome', ts };
    const first = await postEvent(event, 'Ev0DM1');
    expect(first).toEqual({ status: 200, body: { ok: true, outcome: 'accepted' } });
    const retried = await postEvent(event, 'Ev0DM1', { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    expect(retried.body.outcome).toBe('duplicate');
    const [reply] = await waitForBotMessages(DM, 1);
    expect(reply?.text).toBe('echo: *hello & welcome*'.replace('&', '&amp;'));
    expect(reply?.thread_ts).toBeUndefined();
    await waitFor(async () => (slack.reactions.some((r) => r.method === 'reactions.remove' && r.timestamp === ts) ? true : undefined), { what: 'the sign of work removed' });
    expect(slack.reactions.filter((r) => r.timestamp === ts).map((r) => [r.method, r.name])).toEqual([
      ['reactions.add', 'hourglass_flowing_sand'],
      ['reactions.remove', 'hourglass_flowing_sand'],
    ]);
    const row = await waitFor(async () => {
      const latest = await stack.database.db.selectFrom('outbox').select(['status', 'receipt']).where('platform', '=', 'slack').executeTakeFirst();
      return latest?.status === 'delivered' ? latest : undefined;
    });
    expect((row.receipt as any).messageIds).toEqual([reply?.ts]);
    // HERALD_STREAMING_SLACK=off: one plain message, never a draft updated.
    expect(slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args.channel === DM)).toHaveLength(1);
    expect(slack.calls.filter((call) => call.method === 'chat.update')).toHaveLength(0);
    const sessions = await stack.database.db.selectFrom('sessions').select(['origin_user_id']).where('platform', '=', 'slack').execute();
    expect(sessions).toEqual([{ origin_user_id: `slack:${TEAM}:${ALICE}` }]);
  });

  it('keeps a thread as the session: a top-level mention starts one, replies in it need no mention', async () => {
    llm.handler = (request) => ({ text: `users seen: ${request.messages.filter((m) => m.role === 'user').length}` });
    const before = llm.requests.length;
    // Not addressed to the bot; the bot's own message; another bot; an edit; a deletion.
    expect((await postEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: ALICE, text: 'among ourselves', ts: userTs() })).body.outcome).toBe('ignored');
    expect((await postEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: BOT_USER, bot_id: BOT_ID, text: `<@${BOT_USER}> me`, ts: userTs() })).body.outcome).toBe('ignored');
    expect((await postEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', bot_id: 'B0OTHER', subtype: 'bot_message', text: `<@${BOT_USER}> hi`, ts: userTs() })).body.outcome).toBe(
      'ignored',
    );
    expect(
      (await postEvent({ type: 'message', subtype: 'message_changed', channel: CHANNEL, channel_type: 'channel', message: { user: ALICE, text: `<@${BOT_USER}> edited` }, ts: userTs() })).body.outcome,
    ).toBe('ignored');
    expect((await postEvent({ type: 'message', subtype: 'message_deleted', channel: CHANNEL, channel_type: 'channel', ts: userTs() })).body.outcome).toBe('ignored');

    const top = userTs();
    // Slack sends a mention twice (message and app_mention): one message to answer.
    expect((await postEvent({ type: 'app_mention', channel: CHANNEL, user: ALICE, text: `<@${BOT_USER}> start here`, ts: top })).body.outcome).toBe('accepted');
    expect((await postEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: ALICE, text: `<@${BOT_USER}> start here`, ts: top })).body.outcome).toBe('duplicate');
    const [first] = await waitForBotMessages(CHANNEL, 1, top);
    expect(first?.text).toBe('users seen: 1');
    expect((await postEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: BOB, text: 'and a follow-up', ts: userTs(), thread_ts: top })).body.outcome).toBe('accepted');
    const replies = await waitForBotMessages(CHANNEL, 2, top);
    expect(replies[1]?.text).toBe('users seen: 2');
    // A thread the bot is not part of stays the people's own.
    expect((await postEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: BOB, text: 'elsewhere', ts: userTs(), thread_ts: '1700000000.000001' })).body.outcome).toBe('ignored');
    expect(llm.requests.length - before).toBe(2);
    const sessions = await stack.database.db.selectFrom('sessions').select(['chat_id', 'thread_id']).where('chat_id', '=', CHANNEL).execute();
    expect(sessions).toEqual([{ chat_id: CHANNEL, thread_id: top }]);
  });

  it('asks for approval with buttons that only the requester (or an operator) can answer; a bystander is refused privately', async () => {
    llm.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') return { text: `done: ${last.content.slice(0, 200)}` };
      if (request.lastUserText === 'pay rent') return { toolCalls: [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }] };
      if (request.lastUserText === 'pick one') return { toolCalls: [{ name: 'clarify', arguments: { question: 'Which colour?', choices: ['Red', 'Blue'] } }] };
      return { text: `echo: ${request.lastUserText}` };
    };
    const top = userTs();
    await postEvent({ type: 'app_mention', channel: CHANNEL, user: BOB, text: `<@${BOT_USER}> pay rent`, ts: top });
    const prompt = await waitFor(async () => slack.botMessages(CHANNEL, top).find((m) => m.text.startsWith('Approval needed')), { what: 'the approval prompt' });
    const buttons = (prompt.blocks ?? []).flatMap((block: any) => block.elements ?? []);
    expect(buttons.map((b: any) => b.text.text)).toEqual(['Approve', 'Allow for session', 'Deny']);
    const approve = buttons[0].value as string;

    // Carol is allowed to talk to the bot, but this is Bob's request: a refusal only she sees.
    expect((await pressButton(buttonPayload(CAROL, prompt, approve))).body.outcome).toBe('not_yours');
    expect(slack.ephemerals).toEqual([expect.objectContaining({ channel: CHANNEL, user: CAROL, text: expect.stringMatching(/^Only the person whose request this is/) })]);
    const waiting = await stack.database.db.selectFrom('tool_waits').select('status').executeTakeFirstOrThrow();
    expect(waiting.status).toBe('pending');

    expect((await pressButton(buttonPayload(BOB, prompt, approve))).body.outcome).toBe('accepted');
    const done = await waitFor(async () => slack.botMessages(CHANNEL, top).find((m) => m.text.startsWith('done:')), { what: 'the resumed turn' });
    expect(done.text).toContain('transferred 900 for rent');

    // A clarify question offers its choices as buttons; a press answers it with the choice.
    const dmTs = userTs();
    await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'pick one', ts: dmTs });
    const question = await waitFor(async () => slack.botMessages(DM).find((m) => m.text.includes('Which colour?')), { what: 'the question' });
    const choices = (question.blocks ?? []).flatMap((block: any) => block.elements ?? []);
    expect(choices.map((b: any) => b.text.text)).toEqual(['Red', 'Blue']);
    expect((await pressButton(buttonPayload(ALICE, question, choices[1].value))).body.outcome).toBe('accepted');
    const answered = await waitFor(async () => slack.botMessages(DM).find((m) => m.text.startsWith('done:')), { what: 'the answered question' });
    expect(answered.text).toContain('Blue');
  });

  it('runs chat commands typed as text, and /sethome makes the channel the Slack home', async () => {
    const top = userTs();
    await postEvent({ type: 'app_mention', channel: CHANNEL, user: ALICE, text: `<@${BOT_USER}> /status`, ts: top });
    const [status] = await waitForBotMessages(CHANNEL, 1, top);
    expect(status?.text).toMatch(/session/i);
    const dmTs = userTs();
    await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: '/sethome', ts: dmTs });
    const home = await waitFor(async () => slack.botMessages(DM).find((m) => m.text.includes('home chat')), { what: 'the /sethome answer' });
    expect(home.text).toContain('/handoff slack');
  });

  it('parks deliveries while Slack is down and sends them when it is back; an event failing twice is a dead letter', async () => {
    llm.handler = (request) => ({ text: `after the outage: ${request.lastUserText}` });
    slack.outage = true;
    await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'during', ts: userTs() });
    const parked = await waitFor(
      async () => {
        const row = await stack.database.db.selectFrom('outbox').select(['status', 'attempts', 'last_error']).where('text', '=', 'after the outage: during').executeTakeFirst();
        return row && row.attempts >= 2 ? row : undefined;
      },
      { timeoutMs: 20_000, what: 'the reply parked after two attempts' },
    );
    expect(['pending', 'sending']).toContain(parked.status);
    expect(parked.last_error).toMatch(/503|service_unavailable/);
    slack.outage = false;
    await waitFor(async () => (slack.botMessages(DM).some((m) => m.text === 'after the outage: during') ? true : undefined), { timeoutMs: 20_000, what: 'the parked reply sent' });

    // A signed event Herald cannot read (text that is not text): failing the same way twice, it is a
    // dead letter, and Slack gets its 200 so that it stops retrying.
    const poisoned = await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: { not: 'text' }, ts: userTs() }, 'Ev0POISON');
    expect(poisoned).toEqual({ status: 200, body: { ok: true, outcome: 'dead_letter' } });
    const dead = await stack.database.db.selectFrom('dead_letters').select(['source', 'status', 'key']).where('source', '=', 'slack_event').execute();
    expect(dead).toEqual([{ source: 'slack_event', status: 'dead', key: `slack:${TEAM}:Ev0POISON` }]);
    expect((await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: { not: 'text' }, ts: userTs() }, 'Ev0POISON')).body.outcome).toBe('dead_letter');
  });

  it("splits a long answer under Slack's limits and waits out a 429 as Retry-After asks", async () => {
    const paragraphs = Array.from({ length: 4 }, (_, i) => `Part ${i}: ${'lorem ipsum '.repeat(100).trim()}`);
    llm.handler = () => ({ text: paragraphs.join('\n\n') });
    slack.rateLimitNext('chat.postMessage', 1);
    const before = slack.botMessages(DM).length;
    await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'long please', ts: userTs() });
    const sent = await waitFor(
      async () => {
        const messages = slack.botMessages(DM).slice(before);
        return messages.some((m) => m.text.includes('Part 3')) ? messages : undefined;
      },
      { timeoutMs: 20_000, what: 'every part' },
    );
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const message of sent) expect(message.text.length).toBeLessThanOrEqual(3000);
    expect(sent.map((m) => m.text).join('\n\n')).toBe(paragraphs.join('\n\n'));
    const limited = slack.calls.findIndex((call) => call.method === 'chat.postMessage' && call.args.text?.startsWith('Part 0'));
    const retry = slack.calls.slice(limited + 1).find((call) => call.method === 'chat.postMessage');
    expect(retry!.at - slack.calls[limited]!.at).toBeGreaterThanOrEqual(950);
  });

  it('answers a reply in its thread without a mention in a channel bound to another profile', async () => {
    expect((await stack.post('/v1/profiles', { name: 'ops' })).status).toBe(201);
    expect((await stack.put('/v1/bindings', { bindings: [{ platform: 'slack', chat_id: OPS_CHANNEL, profile: 'ops' }] })).status).toBe(200);
    llm.handler = (request) => ({ text: `ops heard: ${request.lastUserText}` });
    const top = userTs();
    expect((await postEvent({ type: 'app_mention', channel: OPS_CHANNEL, user: ALICE, text: `<@${BOT_USER}> deploy status`, ts: top })).body.outcome).toBe('accepted');
    await waitForBotMessages(OPS_CHANNEL, 1, top);
    // No mention: the thread is a session of profile ops (not main), so the bot is part of it.
    expect((await postEvent({ type: 'message', channel: OPS_CHANNEL, channel_type: 'channel', user: BOB, text: 'and the database?', ts: userTs(), thread_ts: top })).body.outcome).toBe('accepted');
    const replies = await waitForBotMessages(OPS_CHANNEL, 2, top);
    expect(replies[1]?.text).toBe('ops heard: and the database?');
    const sessions = await stack.database.db.selectFrom('sessions').select(['profile_id', 'thread_id']).where('chat_id', '=', OPS_CHANNEL).execute();
    expect(sessions).toEqual([{ profile_id: 'ops', thread_id: top }]);
  });

  it('takes an image shared in a DM to the model as an image part, fetched with the bot token', async () => {
    llm.handler = (request) => ({ text: `saw ${imageUrls(request).length} image(s): ${request.lastUserText.split('\n')[0]}` });
    const file = slack.hostFile('graph.png', PNG, 'image/png');
    const event = { type: 'message', subtype: 'file_share', channel: DM, channel_type: 'im', user: ALICE, text: '', files: [file], ts: userTs() };
    expect((await postEvent(event)).body.outcome).toBe('accepted');
    await waitFor(async () => slack.botMessages(DM).find((m) => m.text.startsWith('saw 1 image(s)')), { what: 'the answer about the image' });
    expect(imageUrls(llm.requests.at(-1)!)).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
    expect(slack.downloads).toEqual([{ id: file.id, authorized: true }]);
    // A file whose URL is not Slack's: the bot token is not sent there, and nothing is fetched.
    const elsewhere = { ...slack.hostFile('x.png', PNG, 'image/png'), url_private_download: 'http://127.0.0.1:9/steal', url_private: 'http://127.0.0.1:9/steal' };
    expect((await postEvent({ ...event, text: 'look', files: [elsewhere], ts: userTs() })).body.outcome).toBe('accepted');
    await waitFor(async () => slack.botMessages(DM).find((m) => m.text === 'saw 0 image(s): look'), { what: 'the answer without the image' });
    expect(slack.downloads).toHaveLength(1);
  });

  it('sends a workspace file with send_file through the upload flow, bytes intact, in the DM', async () => {
    const report = Buffer.concat([Buffer.from('host,p99_ms\n'), Buffer.from([0xe2, 0x82, 0xac]), Buffer.from(',120\n')]);
    llm.handler = (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { text: `results: ${last.content.slice(0, 100)}` };
      return {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'out/latency.csv', content: report.toString('utf8') } },
          { name: 'send_file', arguments: { path: 'out/latency.csv', caption: 'p99 by **host**' } },
        ],
      };
    };
    expect((await postEvent({ type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'send me the latency table', ts: userTs() })).body.outcome).toBe('accepted');
    const [upload] = await waitFor(async () => (slack.uploads.length > 0 ? slack.uploads : undefined), { what: 'a file shared by the bot' });
    expect(upload).toMatchObject({ filename: 'latency.csv', channel: DM, initial_comment: 'p99 by *host*' });
    expect(upload!.thread_ts).toBeUndefined();
    expect(upload!.bytes.equals(report)).toBe(true);
    const row = await waitFor(
      async () => {
        const found = await stack.database.db.selectFrom('outbox').select(['status', 'receipt']).where('source', '=', 'file').where('platform', '=', 'slack').executeTakeFirst();
        return found?.status === 'delivered' ? found : undefined;
      },
      { what: 'the file row delivered' },
    );
    expect(row.receipt).toMatchObject({ messageIds: [upload!.id] });
  });

  it('edits a posted message with chat.update (the live-turn edits use it)', async () => {
    const { slackAdapter } = await import('@herald/platforms/slack');
    const sender = slackAdapter.senderFor(stack.config.platforms) as unknown as { edit(target: Record<string, string>, ts: string, text: string, signal: AbortSignal): Promise<void> };
    const [message] = slack.botMessages(DM) as PostedMessage[];
    await sender.edit({ chatId: DM }, message!.ts, 'now **edited**', AbortSignal.timeout(5000));
    expect(slack.messages.find((m) => m.ts === message!.ts)?.edits).toEqual(['now *edited*']);
  });
});

/** About `chars` characters of plain words (no Markdown and nothing to escape: the mrkdwn is the text). */
function words(chars: number, seed = 'word'): string {
  const out: string[] = [];
  for (let i = 0; out.join(' ').length < chars; i++) out.push(`${seed}${i % 97}`);
  return out.join(' ');
}

describe('Slack: a streamed answer grows in one message of its thread', () => {
  let llm: FakeLLM;
  let slack: FakeSlack;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    slack = await startFakeSlack();
    stack = await startStack({ model: llm, env: { ...slack.env, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_ALLOWED_USERS: ALICE, HERALD_DELIVERY_POLL_MS: '100' } });
  });
  afterAll(async () => {
    await stack.stop();
    await slack.close();
  });

  const postEvent = async (event: Record<string, any>) => {
    const body = JSON.stringify(messageEnvelope(event));
    const response = await fetch(`${stack.url}/v1/slack/events`, { method: 'POST', headers: { 'content-type': 'application/json', ...slackSignatureHeaders(body) }, body });
    return (await response.json()) as any;
  };

  it('posts one draft, updates it at most about once a second, and ends with the committed reply', async () => {
    const reply = words(900);
    llm.handler = () => ({ text: reply, chunkDelayMs: 20 });
    const top = '1800000000.100001';
    const started = performance.now();
    expect((await postEvent({ type: 'app_mention', channel: CHANNEL, user: ALICE, text: `<@${BOT_USER}> a long story please`, ts: top })).outcome).toBe('accepted');
    await waitFor(async () => stack.database.db.selectFrom('outbox').select('id').where('status', '=', 'delivered').where('text', '=', reply).executeTakeFirst(), {
      what: 'the reply delivered',
      timeoutMs: 30_000,
    });
    const seconds = (performance.now() - started) / 1000;
    const posts = slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args.channel === CHANNEL);
    const updates = slack.calls.filter((call) => call.method === 'chat.update' && call.args.channel === CHANNEL);
    // One message in the thread: the draft, updated into the answer; never a second one.
    expect(posts).toHaveLength(1);
    expect(posts[0]!.args.thread_ts).toBe(top);
    expect(String(posts[0]!.args.text).endsWith(DRAFT_CURSOR)).toBe(true);
    expect(slack.botMessages(CHANNEL, top)).toHaveLength(1);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    const draftUpdates = updates.slice(0, -1);
    for (let i = 1; i < draftUpdates.length; i++) expect(draftUpdates[i]!.at - draftUpdates[i - 1]!.at).toBeGreaterThanOrEqual(900);
    for (const update of updates) expect(update.args.ts).toBe(slack.botMessages(CHANNEL, top)[0]!.ts);
    expect(updates.at(-1)!.args.text).toBe(markdownToSlackMrkdwn(reply));
    expect(slack.botMessages(CHANNEL, top)[0]!.text).toBe(reply);
  });
});

describe('Slack sender, ambiguous sends', () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await slack.close();
  });

  /** An outbox row with its progress kept in memory, as the outbox keeps it in Postgres. */
  const row = (id: string, target: Record<string, string>, state: { sent: string[]; inFlight: InFlightPart | null; attempts: number }): OutboundDelivery => ({
    id,
    idempotencyKey: `cron:${id}`,
    platform: 'slack',
    target,
    text: 'the weekly numbers',
    sessionId: null,
    drafts: [],
    source: 'cron',
    attempts: state.attempts,
    progress: {
      partsSent: state.sent,
      inFlight: state.inFlight,
      async beginPart(part, anchor) {
        state.inFlight = { part, marker: `m${part}`, anchor };
        return state.inFlight;
      },
      async partSent(_part, messageId) {
        state.sent.push(messageId);
        state.inFlight = null;
      },
      async clearInFlight() {
        state.inFlight = null;
      },
      async recentChatMessageIds() {
        return [];
      },
    },
  });
  const sender = () => new SlackSender(slackWebClient({ botToken: BOT_TOKEN, apiUrl: slack.url }, 500));

  it.each<[string, { chatId: string; threadId?: string }]>([
    ['a channel', { chatId: 'C0AMBIG' }],
    ['a thread', { chatId: 'C0AMBIG', threadId: '1800000000.000777' }],
  ])('finds a part that arrived although its call timed out, in %s, instead of posting it again', async (_where, target) => {
    const state = { sent: [] as string[], inFlight: null as InFlightPart | null, attempts: 1 };
    const id = `row-${target.threadId ?? 'top'}`;
    slack.hangNext('chat.postMessage');
    const failed = await sender()
      .send(row(id, target, state), AbortSignal.timeout(5000))
      .catch((error: unknown) => error);
    expect(DeliveryError.isInstance(failed) && failed.ambiguous && failed.retryable).toBe(true);
    expect(state.inFlight?.part).toBe(0);
    const posted = slack.botMessages('C0AMBIG', target.threadId).filter((m) => (m.metadata?.event_payload as any)?.outbox_id === id);
    expect(posted).toHaveLength(1);
    const receipt = await sender().send(row(id, target, { ...state, attempts: 2 }), AbortSignal.timeout(5000));
    expect(receipt.messageIds).toEqual([posted[0]!.ts]);
    expect(slack.botMessages('C0AMBIG', target.threadId).filter((m) => (m.metadata?.event_payload as any)?.outbox_id === id)).toHaveLength(1);
  });

  it('adopts a draft as the reply, deletes drafts left over, and posts anew for a draft someone deleted', async () => {
    const target = { chatId: 'C0DRAFTS' };
    const slackSender = sender();
    const [kept, extra, gone] = [
      await slackSender.drafts.post(target, 'the weekly', true, AbortSignal.timeout(5000)),
      await slackSender.drafts.post(target, 'numbers…', false, AbortSignal.timeout(5000)),
      await slackSender.drafts.post(target, 'old', true, AbortSignal.timeout(5000)),
    ];
    const state = { sent: [] as string[], inFlight: null as InFlightPart | null, attempts: 1 };
    const receipt = await slackSender.send({ ...row('row-drafts', target, state), drafts: [kept, extra] }, AbortSignal.timeout(5000));
    expect(receipt.messageIds).toEqual([kept]);
    expect(slack.deleted).toContain(extra);
    expect(slack.botMessages('C0DRAFTS').find((m) => m.ts === kept)?.text).toBe('the weekly numbers');
    // Deleted meanwhile: its update answers message_not_found, so the part is posted as a new message.
    await slackSender.drafts.remove(target, gone, AbortSignal.timeout(5000));
    await slackSender.drafts.remove(target, gone, AbortSignal.timeout(5000));
    const again = await slackSender.send({ ...row('row-gone', target, { sent: [], inFlight: null, attempts: 1 }), drafts: [gone] }, AbortSignal.timeout(5000));
    expect(again.messageIds).toHaveLength(1);
    expect(again.messageIds[0]).not.toBe(gone);
    expect(slack.botMessages('C0DRAFTS').find((m) => m.ts === again.messageIds[0])?.text).toBe('the weekly numbers');
  });

  it('posts a part that the lookup proves never arrived', async () => {
    const state = { sent: [] as string[], inFlight: { part: 0, marker: 'm0', anchor: null } as InFlightPart | null, attempts: 2 };
    const receipt = await sender().send(row('row-lost', { chatId: 'C0LOST' }, state), AbortSignal.timeout(5000));
    expect(slack.botMessages('C0LOST').map((m) => m.ts)).toEqual(receipt.messageIds);
    expect(slack.calls.some((call) => call.method === 'conversations.history' && call.args.channel === 'C0LOST')).toBe(true);
  });
});
