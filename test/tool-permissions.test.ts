import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptInbound } from '@herald/inbox';
import { MAX_INVALID_TOOL_ROUNDS } from '@herald/agent';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { countToolCalls } from './support/test-tools.ts';

/**
 * A scripted model that is indifferent to which worker asks: it calls the tool the person's message
 * names, then reports the tool results it got back.
 */
function toolThenReport(calls: (text: string) => { name: string; arguments: Record<string, unknown> }[]) {
  return (request: FakeRequest): FakeReply => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') {
      const results: string[] = [];
      for (let i = request.messages.length - 1; i >= 0 && request.messages[i]?.role === 'tool'; i--) {
        results.unshift(request.messages[i]?.content ?? '');
      }
      return { text: `results: ${results.join(' | ')}` };
    }
    const toolCalls = calls(request.lastUserText);
    return toolCalls.length > 0 ? { toolCalls } : { text: `plain: ${request.lastUserText}` };
  };
}

async function refusals(stack: Stack, sessionId: string): Promise<number> {
  const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM tool_refusals WHERE session_id = ${sessionId}`.execute(stack.database.db);
  return Number(rows.rows[0]?.n);
}

const toolCalls = (stack: Stack, sessionId: string) => countToolCalls(stack.database.db, { sessionId });

describe('tool permissions, approvals and clarify (one worker)', () => {
  let fake: FakeLLM;
  let stack: Stack;
  const send = (chatId: string, text: string, userId = 'u1') => stack.post('/v1/messages?wait=20', { chat_id: chatId, user_id: userId, text });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, testTools: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('refuses, logs and counts a call the person may not make, even though the session offers the tool', async () => {
    const policy = await stack.patch('/v1/profiles/main', { tool_policy: { users: { 'u-guest': { disabled: ['test'] } } } });
    expect(policy.status).toBe(200);
    fake.handler = toolThenReport(() => [{ name: 'send_payment', arguments: { label: 'guest-pay' } }]);
    const response = await send('perm-guest', 'pay it', 'u-guest');
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toContain("Tool 'send_payment' is not permitted here");
    expect(await refusals(stack, response.body.session_id)).toBe(1);
    expect(await toolCalls(stack, response.body.session_id)).toBe(0);
    // The same tool for a person the policy does not narrow runs.
    const allowed = await send('perm-member', 'pay it', 'u-member');
    expect(allowed.body.reply.text).toContain('paid guest-pay');
    await stack.patch('/v1/profiles/main', { tool_policy: {} });
  });

  it('does not offer a disabled toolset, and refuses it if the model calls it anyway', async () => {
    await stack.patch('/v1/profiles/main', { tool_policy: { platforms: { api: { disabled: ['todo'] } } } });
    fake.handler = toolThenReport(() => [{ name: 'todo', arguments: {} }]);
    const response = await send('perm-notodo', 'list');
    const [request] = fake.requestsFor(response.body.session_id);
    expect(request?.toolNames).toContain('memory');
    expect(request?.toolNames).not.toContain('todo');
    expect(response.body.reply.text).toContain("Tool 'todo' is not permitted here");
    await stack.patch('/v1/profiles/main', { tool_policy: {} });
  });

  it('rejects an invalid tool policy with a 400 naming the field', async () => {
    const response = await stack.patch('/v1/profiles/main', { tool_policy: { disabled: 'terminal' } });
    expect(response.status).toBe(400);
    expect(response.body.error.field).toBe('tool_policy.disabled');
  });

  it(`ends the turn with a partial answer after ${MAX_INVALID_TOOL_ROUNDS} rounds of unknown tools`, async () => {
    const before = fake.requests.length;
    fake.handler = () => ({ text: 'Let me check.', toolCalls: [{ name: 'launch_rockets', arguments: {} }] });
    const response = await send('perm-loop', 'go');
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toContain('Let me check.');
    expect(response.body.reply.text).toContain(`my last ${MAX_INVALID_TOOL_ROUNDS} attempts to use tools all failed`);
    expect(response.body.reply.text).toContain("Tool 'launch_rockets' does not exist");
    expect(fake.requests.length - before).toBe(MAX_INVALID_TOOL_ROUNDS);
  });

  it('never runs a hardline call, whoever approves', async () => {
    fake.handler = toolThenReport(() => [{ name: 'wire_transfer', arguments: { label: 'huge', amount: 5_000_000 } }]);
    const response = await send('perm-hardline', 'send it all');
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toContain('BLOCKED: transfers over 1,000,000 are never made by the agent');
    expect(await toolCalls(stack, response.body.session_id)).toBe(0);
    expect(await refusals(stack, response.body.session_id)).toBe(1);
  });

  it('parks a call that needs approval; a denial through the API reaches the model and nothing runs', async () => {
    fake.handler = toolThenReport(() => [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }]);
    const asked = await send('perm-deny', 'pay the rent');
    expect(asked.status).toBe(202);
    expect(asked.body.status).toBe('waiting');
    expect(asked.body.waiting).toMatchObject({ kind: 'approval', tool: 'wire_transfer', prompt: 'transfer 900 (rent)' });
    const waits = await stack.get(`/v1/sessions/${asked.body.session_id}/waits`);
    expect(waits.body.waits).toHaveLength(1);
    expect(waits.body.waits[0].status).toBe('pending');
    // No worker is busy with it: the session has no live lease.
    const lease = await sql<{ live: boolean }>`SELECT expires_at > clock_timestamp() AND NOT released AS live FROM session_leases WHERE session_id = ${asked.body.session_id}`.execute(
      stack.database.db,
    );
    expect(lease.rows[0]?.live ?? false).toBe(false);

    const bad = await stack.post(`/v1/waits/${asked.body.waiting.id}`, { answer: 'sure' });
    expect(bad.status).toBe(400);
    const denied = await stack.post(`/v1/waits/${asked.body.waiting.id}`, { decision: 'deny', reason: 'not this month', user_id: 'u1' });
    expect(denied.status).toBe(200);
    expect(denied.body.status).toBe('denied');
    const again = await stack.post(`/v1/waits/${asked.body.waiting.id}`, { decision: 'approve', user_id: 'u1' });
    expect(again.status).toBe(409);
    const event = await stack.waitForEvent(asked.body.event_id);
    expect(event.reply.text).toContain('BLOCKED: the person denied this call (transfer 900 (rent)). They said: not this month');
    expect(await toolCalls(stack, asked.body.session_id)).toBe(0);
  });

  it('a dangerous terminal command denied in the chat never runs', async () => {
    fake.handler = toolThenReport(() => [{ name: 'terminal', arguments: { command: 'touch keep.txt && chmod 777 keep.txt && echo opened' } }]);
    const asked = await send('perm-term-deny', 'open it up');
    expect(asked.body.waiting).toMatchObject({ kind: 'approval', tool: 'terminal' });
    const denied = await send('perm-term-deny', '/deny too broad');
    expect(denied.body.reply.text).toMatch(/^Denied: /);
    const event = await stack.waitForEvent(asked.body.event_id);
    expect(event.reply.text).toContain('BLOCKED: the person denied this call');
    expect(event.reply.text).toContain('They said: too broad');
    expect(event.reply.text).not.toContain('opened');
  });

  it('refuses a path out of the workspace and an SSRF attempt, as tool errors the model sees', async () => {
    fake.handler = toolThenReport(() => [
      { name: 'read_file', arguments: { path: '../../../../etc/passwd' } },
      { name: 'write_file', arguments: { path: '/etc/herald-owned', content: 'x' } },
      { name: 'web_extract', arguments: { urls: [`${stack.url}/healthz`, 'http://169.254.169.254/latest/meta-data/'] } },
    ]);
    const response = await send('perm-escape', 'look around');
    expect(response.status).toBe(200);
    const text: string = response.body.reply.text;
    expect(text).toMatch(/leaves your workspace/);
    expect(text).not.toMatch(/root:x:0:0/);
    expect(text).toMatch(/loopback/i);
    expect(text).toMatch(/link-local/i);
    expect(text).not.toContain('"status":"ok"');
  });

  it('remembers "allow for this session": the second matching call runs without asking', async () => {
    fake.handler = toolThenReport((text) => [{ name: 'wire_transfer', arguments: { label: text, amount: 500 } }]);
    const first = await send('perm-session', 'first');
    expect(first.body.status).toBe('waiting');
    const approved = await send('perm-session', '/approve session');
    expect(approved.status).toBe(200);
    expect(approved.body.reply.text).toContain('allowed for the rest of this session');
    const firstDone = await stack.waitForEvent(first.body.event_id);
    expect(firstDone.reply.text).toContain('transferred 500 for first');
    const second = await send('perm-session', 'second');
    expect(second.status).toBe(200);
    expect(second.body.reply.text).toContain('transferred 500 for second');
    expect(await toolCalls(stack, first.body.session_id)).toBe(2);
    // Another session is asked again.
    const other = await send('perm-session-2', 'third');
    expect(other.body.status).toBe('waiting');
    await send('perm-session-2', 'no');
    expect((await stack.waitForEvent(other.body.event_id)).reply.text).toContain('BLOCKED: the person denied');
  });

  it('keeps later messages behind a parked turn, in order', async () => {
    fake.handler = toolThenReport((text) => (text === 'pay' ? [{ name: 'wire_transfer', arguments: { label: 'later', amount: 300 } }] : []));
    const parked = await send('perm-order', 'pay');
    expect(parked.body.status).toBe('waiting');
    const queued = await stack.post('/v1/messages', { chat_id: 'perm-order', user_id: 'u1', text: 'meanwhile' });
    expect(queued.status).toBe(202);
    await send('perm-order', '/approve');
    await stack.waitForEvent(parked.body.event_id);
    const later = await stack.waitForEvent(queued.body.event_id);
    expect(later.reply.text).toBe('plain: meanwhile');
    const transcript = (await stack.get(`/v1/sessions/${parked.body.session_id}/messages`)).body.messages;
    // The later message became its own turn only after the parked one finished, whenever it arrived.
    expect(transcript.map((m: any) => `${m.role}:${m.content}`)).toEqual([
      'user:pay',
      'assistant:',
      'tool:transferred 300 for later',
      'assistant:results: transferred 300 for later',
      'user:meanwhile',
      'assistant:plain: meanwhile',
    ]);
  });

  it('/stop withdraws a pending approval instead of leaving the turn parked until the timeout', async () => {
    fake.handler = toolThenReport(() => [{ name: 'wire_transfer', arguments: { label: 'stopped', amount: 800 } }]);
    const asked = await send('perm-stop', 'pay');
    expect(asked.body.status).toBe('waiting');
    const stopped = await send('perm-stop', '/stop');
    expect(stopped.body.reply.text).toBe('Stopped: the pending request is withdrawn.');
    const event = await stack.waitForEvent(asked.body.event_id);
    expect(event.reply.text).toContain('BLOCKED: the person denied this call');
    expect(await toolCalls(stack, asked.body.session_id)).toBe(0);
  });

  it('clarify: asks with choices, parks, and resumes with the next message as the answer', async () => {
    fake.handler = toolThenReport((text) => (text === 'plan a trip' ? [{ name: 'clarify', arguments: { question: 'Where to?', choices: ['Paris', 'Rome'] } }] : []));
    const asked = await send('perm-clarify', 'plan a trip');
    expect(asked.status).toBe(202);
    expect(asked.body.waiting).toMatchObject({ kind: 'clarify', prompt: 'Where to?', choices: ['Paris', 'Rome'] });
    const answer = await send('perm-clarify', 'Rome');
    expect(answer.status).toBe(200);
    expect(answer.body.reply.text).toBe('results: The person answered: Rome');
    const first = await stack.waitForEvent(asked.body.event_id);
    expect(first.reply.text).toBe('results: The person answered: Rome');
    const waits = (await stack.get(`/v1/sessions/${asked.body.session_id}/waits`)).body.waits;
    expect(waits[0]).toMatchObject({ kind: 'clarify', status: 'answered', answer: 'Rome', answered_by: 'api:u1' });
  });
});

// Tests here start `herald` processes; each start may take up to PROCESS_START_MS on a busy machine.
describe('approvals across workers, lapsed approvals and background runs', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  const send = (chatId: string, text: string) => stack.post('/v1/messages?wait=30', { chat_id: chatId, user_id: 'u1', text });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, workerProcesses: true, testTools: true, env: { HERALD_APPROVAL_TIMEOUT_MS: '60000' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('a dangerous command parked on one worker is approved and run by another', async () => {
    fake.handler = toolThenReport(() => [{ name: 'terminal', arguments: { command: 'mkdir -p build/out && rm -r build && echo removed' } }]);
    const first = await stack.startProcess('worker');
    const asked = await send('cross-1', 'clean the build');
    expect(asked.body.status).toBe('waiting');
    expect(asked.body.waiting).toMatchObject({ kind: 'approval', tool: 'terminal' });
    expect(await stopProcess(first, 'SIGTERM')).toBe(0);
    const second = await stack.startProcess('worker');
    const approved = await send('cross-1', '/approve');
    expect(approved.body.reply.text).toMatch(/^Approved: /);
    const done = await stack.waitForEvent(asked.body.event_id);
    expect(done.reply.text).toMatch(/^results: [\s\S]*removed/);
    const turn = await sql<{ worker: string; attempts: number }>`SELECT worker, attempts FROM turns WHERE session_id = ${asked.body.session_id}`.execute(stack.database.db);
    expect(turn.rows).toHaveLength(1);
    // Parking is not a crash: the resumed turn did not spend its attempt budget.
    expect(turn.rows[0]?.attempts).toBe(1);
    expect(turn.rows[0]?.worker).toContain(`:${second.child.pid}:`);
  });

  it('an approval nobody answers lapses as denied', async () => {
    fake.handler = toolThenReport(() => [{ name: 'wire_transfer', arguments: { label: 'ignored', amount: 250 } }]);
    const asked = await send('lapse-1', 'pay');
    expect(asked.body.status).toBe('waiting');
    const waiting = (await stack.get(`/v1/sessions/${asked.body.session_id}/waits`)).body.waits[0];
    expect(Date.parse(waiting.expires_at) - Date.parse(waiting.created_at)).toBe(60_000);
    // Skip the minute: move the deadline to now and let the scheduler's sweep find it.
    await sql`UPDATE tool_waits SET expires_at = clock_timestamp() WHERE id = ${waiting.id}`.execute(stack.database.db);
    const done = await stack.waitForEvent(asked.body.event_id, 40_000);
    expect(done.reply.text).toContain('BLOCKED: nobody approved this call (transfer 250 (ignored)) within 1 minute. Silence is not consent');
    const waits = (await stack.get(`/v1/sessions/${asked.body.session_id}/waits`)).body.waits;
    expect(waits[0]).toMatchObject({ status: 'expired', answered_by: 'timeout' });
    expect(await toolCalls(stack, asked.body.session_id)).toBe(0);
  });

  it('a scheduled run never gets approvals or questions: the calls are refused', async () => {
    fake.handler = toolThenReport(() => [
      { name: 'wire_transfer', arguments: { label: 'nightly', amount: 400 } },
      { name: 'clarify', arguments: { question: 'Sure?' } },
      { name: 'wire_transfer', arguments: { label: 'small', amount: 5 } },
    ]);
    const accepted = await acceptInbound(stack.database.db, {
      profileId: 'main',
      platform: 'cron',
      chatType: 'job',
      chatId: 'job-1',
      userId: 'api:scheduler',
      text: 'nightly payments',
    });
    // The reconciler picks the session up: this test stack has no direct wake-up for it.
    const reply: string = (await stack.waitForEvent(accepted.eventId, 30_000)).reply.text;
    expect(reply).toContain("BLOCKED: this call needs a person's approval (transfer 400 (nightly)) and cron runs never get approvals");
    expect(reply).toContain("Tool 'clarify' is not permitted here");
    expect(reply).toContain('transferred 5 for small');
    expect(await refusals(stack, accepted.sessionId)).toBe(2);
    const [request] = fake.requestsFor(accepted.sessionId);
    expect(request?.toolNames).toContain('wire_transfer');
    expect(request?.toolNames).not.toContain('clarify');
  });
});
