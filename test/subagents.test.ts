import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { HERALD_BIN, PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
import { delegatingModel } from './support/delegating-model.ts';
import type { DelegatingModel } from './support/delegating-model.ts';
import { gate } from './support/wait.ts';
import { writeHooks } from './support/hook-fixtures.ts';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// subagent_start and subagent_stop, appended by module hooks to a file as JSON lines.
const hookLog = join(mkdtempSync(join(tmpdir(), 'herald-subagent-hooks-')), 'events.jsonl');
const logger = (event: string) =>
  `import { appendFileSync } from 'node:fs';\nexport default function register(ctx) { ctx.on('${event}', (e) => { appendFileSync(${JSON.stringify(hookLog)}, JSON.stringify(e) + '\\n'); }); }\n`;
const hooksFile = writeHooks(
  { 'start.mjs': logger('subagent_start'), 'stop.mjs': logger('subagent_stop') },
  'hooks:\n  - name: start-log\n    event: subagent_start\n    module: ./start.mjs\n  - name: stop-log\n    event: subagent_stop\n    module: ./stop.mjs\n',
);
const hookEvents = (): { event: string; run_id: string; exit_reason?: string }[] =>
  existsSync(hookLog)
    ? readFileSync(hookLog, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

// Two `herald worker` processes, one slot each: a parent holding its slot while it waits would
// leave one slot for its children, so two children in flight at once show the slot is free.
describe('delegate_task: children as runs on the queue', { timeout: 4 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let model: DelegatingModel;
  let stack: Stack;
  let workers: HeraldProcess[] = [];
  const env = { HERALD_WORKER_CONCURRENCY: '1', HERALD_DELEGATION_MAX_ITERATIONS: '3', HERALD_HOOKS_FILE: hooksFile };

  beforeAll(async () => {
    model = delegatingModel();
    fake = await startFakeOpenAI({ handler: model.handler });
    stack = await startStack({ model: fake, workerProcesses: true, env });
    workers = await Promise.all([stack.startProcess('worker'), stack.startProcess('worker')]);
  }, 3 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  const ask = async (chat: string, text: string) => {
    const sent = await stack.post('/v1/messages', { chat_id: chat, user_id: 'alice', text });
    expect(sent.status).toBe(202);
    return sent.body.event_id as string;
  };
  const resultOf = (reply: string) => JSON.parse(reply.replace(/^parent got: /, '')) as any;

  it('runs a batch of three on both workers, the parent parked without a slot, and resumes with every result', async () => {
    // Two children hold their model call until both are in flight at once: with two slots, that
    // happens only if the parked parent holds none (else the test times out here).
    const release = gate();
    model = delegatingModel({ childMs: 100, release: release.opened });
    fake.handler = model.handler;
    const tasks = [{ goal: 'hold: count the apples' }, { goal: 'hold: count the pears', context: 'they are in the basket' }, { goal: 'spin the wheel' }];
    const eventId = await ask('batch', `delegate: ${JSON.stringify({ tasks })}`);
    await waitFor(async () => model.inFlight() === 2, { timeoutMs: 60_000, what: 'two children in flight at once' });
    release.open();
    const event = await stack.waitForEvent(eventId, 60_000);
    const { results } = resultOf(event.reply.text);
    expect(results.map((r: any) => [r.task_index, r.status, r.exit_reason])).toEqual([
      [0, 'ok', 'completed'],
      [1, 'ok', 'completed'],
      [2, 'error', 'max_iterations'],
    ]);
    expect(results[0].summary).toBe('done: hold: count the apples');
    expect(results[1].summary).toBe('done: hold: count the pears');
    expect(results[0]).toMatchObject({ api_calls: 1, model: 'gpt-test', tool_trace: [] });
    expect(results[0].tokens.input).toBeGreaterThan(0);
    expect(results[0].duration_seconds).toBeGreaterThan(0);
    // Over its budget (HERALD_DELEGATION_MAX_ITERATIONS=3): three calls, three todo calls traced.
    expect(results[2].api_calls).toBe(3);
    expect(results[2].tool_trace.map((t: any) => [t.tool, t.status])).toEqual([
      ['todo', 'ok'],
      ['todo', 'ok'],
      ['todo', 'ok'],
    ]);
    // Each child fired subagent_start and subagent_stop once, the stop with its exit reason.
    const byRun = (event: string) =>
      hookEvents()
        .filter((e) => e.event === event)
        .map((e) => [e.run_id, e.exit_reason])
        .sort();
    const ids = results.map((r: any) => r.run_id);
    expect(byRun('subagent_start')).toEqual(ids.map((id: string) => [id, undefined]).sort());
    expect(byRun('subagent_stop')).toEqual(ids.map((id: string, i: number) => [id, results[i].exit_reason]).sort());
    const db = stack.database.db;
    const runs = await sql<{ worker: string }>`
      SELECT t.worker FROM subagent_runs r JOIN turns t ON t.session_id = r.child_session_id`.execute(db);
    expect(new Set(runs.rows.map((r) => r.worker.split(':')[1]))).toEqual(new Set(workers.map((w) => String(w.child.pid))));
    // The wait was a 'subagents' wait, answered by the last child; the parent's cost includes theirs.
    const wait = await sql<{ kind: string; status: string }>`SELECT kind, status FROM tool_waits`.execute(db);
    expect(wait.rows).toEqual([{ kind: 'subagents', status: 'answered' }]);
    const parent = await sql<{ delegated: string; children: string }>`
      SELECT s.delegated_input_tokens AS delegated, (SELECT sum(input_tokens) FROM model_calls m JOIN sessions c ON c.id = m.session_id WHERE c.delegated_from = s.id) AS children
      FROM sessions s WHERE s.chat_id = 'batch'`.execute(db);
    expect(Number(parent.rows[0]?.delegated)).toBe(Number(parent.rows[0]?.children));
    // Child sessions are hidden from the session list unless asked for.
    const listed = await stack.get('/v1/sessions');
    expect(listed.body.sessions.map((s: any) => s.chat_id)).toEqual(['batch']);
    const all = await stack.get('/v1/sessions?subagents=true');
    expect(all.body.sessions).toHaveLength(4);
  });

  it("refuses a batch of four with Hermes' message, starting nothing", async () => {
    const tasks = [1, 2, 3, 4].map((n) => ({ goal: `task ${n}` }));
    const event = await stack.waitForEvent(await ask('four', `delegate: ${JSON.stringify({ tasks })}`), 30_000);
    expect(resultOf(event.reply.text)).toEqual({
      error: expect.stringMatching(/^Too many tasks: 4 provided, but at most 3 run at once/),
    });
    const runs = await sql<{ n: string }>`SELECT count(*) AS n FROM subagent_runs r JOIN sessions s ON s.id = r.parent_session_id WHERE s.chat_id = 'four'`.execute(stack.database.db);
    expect(Number(runs.rows[0]?.n)).toBe(0);
  });

  it('refuses delegate_task to a child at depth 1: it is not among its tools', async () => {
    const event = await stack.waitForEvent(await ask('depth', `delegate: ${JSON.stringify({ goal: 'nest please', role: 'orchestrator' })}`), 60_000);
    const { results } = resultOf(event.reply.text);
    expect(results[0].summary).toMatch(/^nested: Tool 'delegate_task' is not permitted here/);
    expect(results[0].tool_trace).toEqual([expect.objectContaining({ tool: 'delegate_task', status: 'error' })]);
    const runs = await sql<{ role: string; tools: string[] }>`SELECT role, tools FROM subagent_runs r JOIN sessions s ON s.id = r.parent_session_id WHERE s.chat_id = 'depth'`.execute(
      stack.database.db,
    );
    // Asked for orchestrator, but at depth 1 of max_spawn_depth 1 it is a leaf without the blocked tools.
    expect(runs.rows[0]?.role).toBe('leaf');
    for (const blocked of ['delegate_task', 'clarify', 'memory', 'cronjob']) expect(runs.rows[0]?.tools).not.toContain(blocked);
    expect(runs.rows[0]?.tools).toContain('todo');
  });

  it('cancelling the parent turn cancels its children and the parent resumes with them interrupted', async () => {
    const release = gate();
    model = delegatingModel({ release: release.opened });
    fake.handler = model.handler;
    const tasks = [{ goal: 'hold one' }, { goal: 'hold two' }];
    const eventId = await ask('cancel', `delegate: ${JSON.stringify({ tasks })}`);
    const db = stack.database.db;
    const turn = await waitFor(
      async () => {
        const row = await sql<{ parent_turn_id: string; n: string }>`
        SELECT parent_turn_id, count(*) AS n FROM subagent_runs r JOIN sessions s ON s.id = r.parent_session_id
        WHERE s.chat_id = 'cancel' AND r.status = 'running' GROUP BY parent_turn_id`.execute(db);
        return Number(row.rows[0]?.n) === 2 ? row.rows[0]?.parent_turn_id : undefined;
      },
      { timeoutMs: 30_000, what: 'both children running' },
    );
    expect((await stack.post('/v1/runs/not-a-uuid/cancel', {})).status).toBe(400);
    expect((await stack.post(`/v1/runs/${crypto.randomUUID()}/cancel`, {})).status).toBe(404);
    const cancelled = await stack.post(`/v1/runs/${turn}/cancel`, {});
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.cancelled).toHaveLength(2);
    const event = await stack.waitForEvent(eventId, 30_000);
    release.open();
    const { results } = resultOf(event.reply.text);
    expect(results.map((r: any) => [r.status, r.exit_reason])).toEqual([
      ['interrupted', 'interrupted'],
      ['interrupted', 'interrupted'],
    ]);
    const listed = await stack.get(`/v1/runs?status=cancelled`);
    expect(listed.body.runs).toHaveLength(2);
    const one = await stack.get(`/v1/runs/${listed.body.runs[0].id}`);
    expect(one.body).toMatchObject({ status: 'cancelled', exit_reason: 'interrupted', result: { status: 'interrupted' } });
    expect((await stack.get('/v1/runs/nope')).status).toBe(400);
    expect((await stack.get(`/v1/runs/${crypto.randomUUID()}`)).status).toBe(404);
    // The same through `herald runs`.
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, [HERALD_BIN, 'runs', ...args], { env: { ...process.env, ...stack.env, HERALD_URL: stack.url } });
    const json = JSON.parse((await cli('list', '--status', 'cancelled', '--json')).stdout);
    expect(json.map((run: any) => run.id).sort()).toEqual(listed.body.runs.map((run: any) => run.id).sort());
    expect((await cli('show', listed.body.runs[0].id)).stdout).toContain('"status": "cancelled"');
    expect((await cli('cancel', listed.body.runs[0].id)).stdout).toBe('nothing to cancel: the runs had ended\n');
  });

  const childTurnOf = (chat: string) =>
    waitFor(
      async () => {
        const row = await sql<{ worker: string; run: string }>`
        SELECT t.worker, r.id AS run FROM subagent_runs r JOIN sessions s ON s.id = r.parent_session_id
        JOIN turns t ON t.session_id = r.child_session_id WHERE s.chat_id = ${chat} AND t.status = 'running'`.execute(stack.database.db);
        return row.rows[0];
      },
      { timeoutMs: 30_000, what: `a child of ${chat} running` },
    );
  const processOf = (worker: string) => workers.find((w) => String(w.child.pid) === worker.split(':')[1]);

  it('a worker killed during a child: the child finishes on the other worker and the parent resumes', async () => {
    const release = gate();
    model = delegatingModel({ release: release.opened });
    fake.handler = model.handler;
    const eventId = await ask('kill', `delegate: ${JSON.stringify({ goal: 'hold the line' })}`);
    const running = await childTurnOf('kill');
    // Killed inside its model call, after subagent_start was fired and recorded.
    await waitFor(async () => model.inFlight() === 1, { timeoutMs: 30_000, what: 'the child in its model call' });
    const victim = processOf(running.worker);
    expect(victim).toBeDefined();
    await stopProcess(victim!, 'SIGKILL');
    release.open();
    const event = await stack.waitForEvent(eventId, 60_000);
    const { results } = resultOf(event.reply.text);
    expect(results).toEqual([expect.objectContaining({ status: 'ok', exit_reason: 'completed', summary: 'done: hold the line' })]);
    const turn = await sql<{ worker: string; attempts: number }>`
      SELECT t.worker, t.attempts FROM turns t WHERE t.session_id = (SELECT child_session_id FROM subagent_runs WHERE id = ${running.run})`.execute(stack.database.db);
    expect(turn.rows[0]?.worker).not.toBe(running.worker);
    expect(turn.rows[0]?.attempts).toBe(2);
    // Resumed on the other worker, the child did not fire subagent_start a second time.
    expect(
      hookEvents()
        .filter((e) => e.run_id === running.run)
        .map((e) => e.event),
    ).toEqual(['subagent_start', 'subagent_stop']);
    workers = [...workers.filter((w) => w !== victim), await stack.startProcess('worker')];
  });

  it("a background child's result reaches the parent session after every worker restarted", async () => {
    const release = gate();
    model = delegatingModel({ release: release.opened });
    fake.handler = model.handler;
    const started = await stack.waitForEvent(await ask('bg', `delegate: ${JSON.stringify({ goal: 'hold in the background', background: true })}`), 30_000);
    const ack = resultOf(started.reply.text);
    expect(ack).toMatchObject({ status: 'started', background: true, runs: [{ task_index: 0 }] });
    await childTurnOf('bg');
    await Promise.all(workers.map((w) => stopProcess(w, 'SIGKILL')));
    workers = await Promise.all([stack.startProcess('worker'), stack.startProcess('worker')]);
    release.open();
    const db = stack.database.db;
    const answer = await waitFor(
      async () => {
        const rows = await sql<{ content: string }>`
        SELECT m.content FROM messages m JOIN sessions s ON s.id = m.session_id
        WHERE s.chat_id = 'bg' AND m.role = 'assistant' AND m.content LIKE 'echo: [Background task%'`.execute(db);
        return rows.rows[0]?.content;
      },
      { timeoutMs: 60_000, what: 'the background result answered in the parent session' },
    );
    expect(answer).toContain(`[Background task ${ack.runs[0].run_id} finished (completed). Goal: hold in the background]`);
    expect(answer).toContain('done: hold in the background');
  });
});
