import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { APP_TOKEN, messageEnvelope, startFakeSlack, TEAM } from './support/fake-slack.ts';
import type { FakeSlack } from './support/fake-slack.ts';
import { PROCESS_START_MS, spawnHerald, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';

const ALICE = 'U0ALICE';
const LEASE = 'slack-socket:A0FAKEAPP';

describe('Slack over Socket Mode, and cron reports into channels', { timeout: 3 * PROCESS_START_MS }, () => {
  let llm: FakeLLM;
  let slack: FakeSlack;
  let stack: Stack;
  const ingresses: HeraldProcess[] = [];

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: request.lastUserText.includes('weekly report') ? 'all systems nominal' : `socket: ${request.lastUserText}` }) });
    slack = await startFakeSlack();
    // The stack's own ingress takes no socket (no app token): the two ingress processes below do.
    stack = await startStack({
      model: llm,
      scheduler: true,
      env: {
        ...slack.env,
        SLACK_ALLOWED_USERS: '*',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        HERALD_OPERATORS: 'api:42',
      },
    });
    for (let i = 0; i < 2; i++) ingresses.push(spawnHerald('ingress', { ...stack.env, SLACK_APP_TOKEN: APP_TOKEN, PORT: '0', LOG_LEVEL: 'info' }));
    await Promise.all(ingresses.map((ingress) => waitFor(async () => ingress.output().includes('ingress listening on'), { timeoutMs: PROCESS_START_MS, what: 'ingress start' })));
  }, 2 * PROCESS_START_MS);

  afterAll(async () => {
    await Promise.all(ingresses.map((ingress) => stopProcess(ingress)));
    await stack.stop();
    await slack.close();
  });

  const dm = (text: string, ts: string) => slack.pushEvent(messageEnvelope({ type: 'message', channel: 'D0ALICE', channel_type: 'im', user: ALICE, text, ts }));
  const answered = (text: string) =>
    waitFor(async () => (slack.botMessages('D0ALICE').some((m) => m.text === `socket: ${text}`) ? true : undefined), { timeoutMs: 30_000, what: `the answer to '${text}'` });

  it('holds one socket per Slack app across two ingress processes, and acks an envelope only once it is committed', async () => {
    await waitFor(async () => (slack.openSockets() === 1 ? true : undefined), { timeoutMs: 30_000, what: 'one socket' });
    // The second process keeps asking for the lease and never connects.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(slack.socketsOpened()).toBe(1);
    expect(slack.openSockets()).toBe(1);
    const leases = await stack.database.db.selectFrom('platform_leases').select('name').execute();
    expect(leases.map((lease) => lease.name)).toEqual([LEASE]);

    const envelope = dm('over the socket', '1800000001.000001');
    await waitFor(async () => (slack.acks.includes(envelope) ? true : undefined), { what: 'the ack' });
    const committed = await stack.database.db.selectFrom('inbound_events').select('dedupe_key').where('dedupe_key', '=', `slack:${TEAM}:D0ALICE:1800000001.000001`).execute();
    expect(committed).toHaveLength(1);
    await answered('over the socket');
  });

  it('reconnects when Slack sends disconnect and when the socket drops, still with one connection', async () => {
    slack.sendDisconnect();
    await waitFor(async () => (slack.socketsOpened() === 2 && slack.openSockets() === 1 ? true : undefined), { timeoutMs: 30_000, what: 'the reconnect after disconnect' });
    dm('after the refresh', '1800000001.000002');
    await answered('after the refresh');
    slack.dropSockets();
    await waitFor(async () => (slack.socketsOpened() === 3 && slack.openSockets() === 1 ? true : undefined), { timeoutMs: 30_000, what: 'the reconnect after a drop' });
    dm('after the drop', '1800000001.000003');
    await answered('after the drop');
    expect(slack.calls.filter((call) => call.method === 'apps.connections.open')).toHaveLength(3);
  });

  it('hands the socket to the other process when the holder stops', async () => {
    const holder = (await stack.database.db.selectFrom('platform_leases').select('owner').where('name', '=', LEASE).executeTakeFirstOrThrow()).owner;
    const [pid] = holder.split(':').slice(1, 2).map(Number);
    const leaving = ingresses.find((ingress) => ingress.child.pid === pid)!;
    expect(leaving).toBeDefined();
    await stopProcess(leaving, 'SIGTERM');
    await waitFor(async () => (slack.socketsOpened() === 4 && slack.openSockets() === 1 ? true : undefined), { timeoutMs: 40_000, what: 'the other process connecting' });
    dm('after the handover', '1800000001.000004');
    await answered('after the handover');
  });

  it('posts a cron report into several channels and a thread without a burst, through the outbox with receipts', async () => {
    // A bot account this deployment does not have: refused when the job is saved, naming the field.
    const unknown = await stack.post('/v1/cron/jobs', { user_id: '42', schedule: 'every 1d', prompt: 'weekly report', deliver: 'slack:C0OPS,slack@ops:C0OTHER' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ field: 'deliver', message: expect.stringContaining("slack@ops:C0OTHER: there is no Slack account 'ops' here (the Slack accounts are default") });
    const created = await stack.post('/v1/cron/jobs', {
      user_id: '42',
      schedule: 'every 1d',
      prompt: 'weekly report',
      deliver: 'slack:C0OPS,slack:C0DEV,slack@default:C0QA,slack:C0OPS:1800000000.000009',
    });
    expect(created.status).toBe(201);
    const jobId = created.body.job_id as string;
    const started = await stack.post(`/v1/cron/jobs/${jobId}/run`, {});
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const runs = (await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs as any[];
        const current = runs.find((candidate) => candidate.run_id === started.body.run_id);
        return current?.deliveries?.length === 4 && current.deliveries.every((d: any) => d.status === 'delivered' || d.status === 'failed') ? current : undefined;
      },
      { timeoutMs: 40_000, what: 'four deliveries settled' },
    );
    const byTarget = Object.fromEntries(run.deliveries.map((d: any) => [d.target, d]));
    for (const target of ['slack:C0OPS', 'slack:C0DEV', 'slack:C0QA', 'slack:C0OPS:1800000000.000009']) {
      expect(byTarget[target]?.status).toBe('delivered');
      expect(byTarget[target]?.receipt?.messageIds?.[0]).toMatch(/^\d+\.\d+$/);
    }
    expect(slack.botMessages('C0OPS', '1800000000.000009').map((m) => m.text)).toEqual(['all systems nominal']);
    const posts = slack.calls.filter((call) => call.method === 'chat.postMessage' && call.args.text === 'all systems nominal');
    expect(posts).toHaveLength(4);
    // Spaced at Slack's posting pace, not fired at once.
    for (let i = 1; i < posts.length; i++) expect(posts[i]!.at - posts[i - 1]!.at).toBeGreaterThanOrEqual(200);
  });
});
