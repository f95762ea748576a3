import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import type { ProcessesConfig } from '@herald/core';
import { BackgroundProcesses } from '../src/terminal/background-processes.ts';
import type { BackgroundProcess, ExitNotice } from '../src/terminal/background-processes.ts';
import { createProcessTool } from '../src/terminal/process-tool.ts';
import { createTerminalTool } from '../src/terminal/terminal-tool.ts';
import { spawnWithData } from '../src/terminal/process-run.ts';
import { openSandbox } from '../src/sandbox/sandbox.ts';
import type { Sandbox } from '../src/sandbox/sandbox.ts';
import type { Tool } from '../src/shared/tool.ts';
import { offlineContext } from './call-context.ts';
import { noneRunning, running } from './host-processes.ts';

let base: string;
let sandbox: Sandbox;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-process-'));
  // A root worker's commands run as the sandbox user, who must pass through to the workspaces.
  await chmod(base, 0o755);
  const choice = await openSandbox({ settings: loadConfig({}).tools.sandbox, env: { PATH: '/usr/bin:/bin' } });
  if (choice.sandbox === null) throw new Error(choice.notice);
  sandbox = choice.sandbox;
});
afterAll(() => rm(base, { recursive: true, force: true }));

function harness(settings: Partial<ProcessesConfig> = {}, endedKept?: { perSession: number; perWorker: number }) {
  const notices: ExitNotice[] = [];
  const stopped: { sessionId: string; ended: BackgroundProcess[] }[] = [];
  const processes = new BackgroundProcesses({
    settings: { perSession: 4, perWorker: 16, maxRuntimeMs: 60_000, outputChars: 1000, ...settings },
    notify: async (notice) => void notices.push(notice),
    notifyStopped: async (sessionId, ended) => void stopped.push({ sessionId, ended: [...ended] }),
    ...(endedKept === undefined ? {} : { endedKept }),
  });
  const tool = createProcessTool({ sandbox, processes });
  const call = async (sessionId: string, args: unknown): Promise<any> =>
    JSON.parse(await tool.execute(tool.schema.parse(args), offlineContext({ sessionId, userId: 'api:ada', workspaceDir: join(base, sessionId) })));
  return { processes, tool: tool as Tool, call, notices, stopped };
}

describe('process (background commands)', () => {
  it('starts a command that outlives the call, polls new output, writes stdin, waits, and notifies on exit with the tail', async () => {
    const { call, notices } = harness();
    const started = await call('s1', { action: 'start', command: 'echo ready; read line; echo "got $line"; exit 3', notify_on_exit: true });
    expect(started).toMatchObject({ status: 'running', notify_on_exit: true });
    const id = started.session_id as string;
    const waited = await call('s1', { action: 'wait', session_id: id, timeout: 1 });
    expect(waited).toMatchObject({ status: 'running', timed_out: true, output: 'ready\n' });
    expect((await call('s1', { action: 'poll', session_id: id })).output).toBe('');
    expect(await call('s1', { action: 'submit', session_id: id, data: 'hello' })).toEqual({ session_id: id, written: 6 });
    const done = await call('s1', { action: 'wait', session_id: id, timeout: 10 });
    expect(done).toMatchObject({ status: 'exited', exit_code: 3, timed_out: false, output: 'got hello\n' });
    expect(notices).toEqual([expect.objectContaining({ sessionId: 's1', userId: 'api:ada', processId: id, exitCode: 3, tail: 'ready\ngot hello\n' })]);
    expect((await call('s1', { action: 'log', session_id: id })).output).toBe('ready\ngot hello\n');
    // Another session does not see it.
    await expect(call('s2', { action: 'poll', session_id: id })).rejects.toThrow(/no process .* in this session/);
    expect((await call('s2', { action: 'list' })).processes).toEqual([]);
  });

  it('kills a process with everything it started, and keeps only the newest output in the ring', async () => {
    const { call } = harness({ outputChars: 1000 });
    const started = await call('s3', { action: 'start', command: 'seq 1 5000; sleep 30.31 & wait' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const log = await call('s3', { action: 'poll', session_id: started.session_id });
    expect(log.output.length).toBeLessThanOrEqual(1000);
    expect(log.output.trimEnd().endsWith('5000')).toBe(true);
    expect(log.note).toMatch(/earlier characters not shown/);
    const killed = await call('s3', { action: 'kill', session_id: started.session_id });
    expect(killed).toMatchObject({ status: 'killed', ended_because: 'killed with the process tool' });
    expect(await noneRunning('sleep 30.31')).toBe(true);
  });

  it('holds to the limits per session and per worker', async () => {
    const { call, processes } = harness({ perSession: 2, perWorker: 3 });
    await call('a', { action: 'start', command: 'sleep 30.41' });
    await call('a', { action: 'start', command: 'sleep 30.41' });
    await expect(call('a', { action: 'start', command: 'sleep 30.41' })).rejects.toThrow(/already runs 2 background processes \(the limit\)/);
    await call('b', { action: 'start', command: 'sleep 30.41' });
    await expect(call('c', { action: 'start', command: 'sleep 30.41' })).rejects.toThrow(/this worker already runs 3 background processes/);
    await processes.stopAll();
  });

  it('ends every process when the worker stops and tells each session once', async () => {
    const { call, processes, stopped, notices } = harness();
    await call('x', { action: 'start', command: 'sleep 30.51', notify_on_exit: true });
    await call('x', { action: 'start', command: 'sleep 30.51' });
    await call('y', { action: 'start', command: 'sleep 30.51' });
    await processes.stopAll();
    expect(await noneRunning('sleep 30.51')).toBe(true);
    expect(stopped.map((s) => [s.sessionId, s.ended.length]).sort()).toEqual([
      ['x', 2],
      ['y', 1],
    ]);
    expect(notices).toEqual([]);
    await expect(call('x', { action: 'start', command: 'true' })).rejects.toThrow(/worker is stopping/);
  });

  it('ends a process whose start was under way when the worker began stopping, and tells its session', async () => {
    const { processes, stopped } = harness();
    const workspace = join(base, 'z');
    await mkdir(workspace);
    // The sandbox is still claiming the workspace when stopAll runs: the start is not yet a running process.
    const pending = processes.start(sandbox, { sessionId: 'z', userId: 'api:ada', command: 'sleep 30.61', workspace, network: false, notifyOnExit: true });
    await processes.stopAll();
    expect((await pending).status).toBe('killed');
    expect(await noneRunning('sleep 30.61')).toBe(true);
    expect(stopped.map((s) => [s.sessionId, s.ended.length])).toEqual([['z', 1]]);
  });

  it("ends a sandbox whose inner process has left the launcher's group and is not yet bound to it", async () => {
    // bubblewrap's inner process calls setsid() (--new-session) a moment before it binds its life to
    // the launcher (--die-with-parent); a launcher killed in that moment left the command running.
    // This launcher holds that moment open: its child is in a session of its own, bound to nothing.
    const launcher: Sandbox = {
      kind: 'bwrap',
      run: (command) => sandbox.run(command),
      launch: (program) => sandbox.launch(program),
      start: async (command) => spawnWithData({ file: '/bin/sh', args: ['-c', 'setsid sleep "$0" & wait', '30.71'], env: { PATH: '/usr/bin:/bin' }, cwd: command.workspace }),
    };
    const { processes } = harness();
    const entry = await processes.start(launcher, { sessionId: 'w', userId: 'api:ada', command: 'unused', workspace: base, network: false, notifyOnExit: false });
    for (let i = 0; i < 100 && running('sleep 30.71').length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running('sleep 30.71')).toHaveLength(1);
    await processes.kill(entry);
    expect(await noneRunning('sleep 30.71')).toBe(true);
  });

  it('leaves nothing running when a command is stopped while its sandbox is still setting up', async () => {
    // Stopped at once to a few ms in: bubblewrap's inner process leaves the launcher's group before
    // it ties its life to the launcher, so a launcher ended in between used to orphan the command.
    const workspace = join(base, 'fg');
    await mkdir(workspace, { recursive: true });
    for (let i = 0; i < 40; i += 1) {
      const stopping = new AbortController();
      const run = sandbox.run({ command: 'sleep 30.93', workspace, network: false, timeoutMs: 60_000, outputChars: 1000, signal: stopping.signal });
      setTimeout(() => stopping.abort(), i % 8);
      await run.catch(() => undefined);
    }
    expect(await noneRunning('sleep 30.93')).toBe(true);
  });

  it("keeps a session's newest 20 ended processes and frees the older ones", async () => {
    const { call } = harness();
    const ids: string[] = [];
    for (let i = 0; i < 22; i += 1) {
      const started = await call('k', { action: 'start', command: `echo run-${i}` });
      await call('k', { action: 'wait', session_id: started.session_id, timeout: 10 });
      ids.push(started.session_id);
    }
    const live = await call('k', { action: 'start', command: 'sleep 30.81' });
    const listed = (await call('k', { action: 'list' })).processes.map((p: { session_id: string }) => p.session_id);
    expect(listed).toEqual([...ids.slice(2), live.session_id]);
    await expect(call('k', { action: 'poll', session_id: ids[0] })).rejects.toThrow(/no process .* in this session/);
    expect((await call('k', { action: 'log', session_id: ids[2] })).output).toBe(`run-2\n`);
    await call('k', { action: 'kill', session_id: live.session_id });
  });

  it('keeps a bounded number of ended processes over all sessions, the oldest ended first out', async () => {
    const { call } = harness({}, { perSession: 3, perWorker: 5 });
    const ended: { session: string; id: string }[] = [];
    for (const session of ['w1', 'w2', 'w3']) {
      for (let i = 0; i < 2; i += 1) {
        const started = await call(session, { action: 'start', command: `echo ${session}-${i}` });
        await call(session, { action: 'wait', session_id: started.session_id, timeout: 10 });
        ended.push({ session, id: started.session_id });
      }
    }
    // Six ended, five kept: the first of w1 is gone, everything after it is still there.
    await expect(call('w1', { action: 'poll', session_id: ended[0]!.id })).rejects.toThrow(/no process .* in this session/);
    for (const { session, id } of ended.slice(1)) expect((await call(session, { action: 'poll', session_id: id })).status).toBe('exited');
    expect((await call('w1', { action: 'list' })).processes.map((p: { session_id: string }) => p.session_id)).toEqual([ended[1]!.id]);
  });

  it("starts the same background process through Hermes' terminal(background=true, notify_on_complete)", async () => {
    const { call, processes, notices } = harness();
    const terminal = createTerminalTool({ sandbox, processes });
    const started = JSON.parse(
      await terminal.execute(
        terminal.schema.parse({ command: 'echo bg-done', background: true, notify_on_complete: true }),
        offlineContext({ sessionId: 't1', userId: 'api:ada', workspaceDir: join(base, 't1') }),
      ),
    );
    expect(started).toMatchObject({ status: 'running', notify_on_exit: true });
    expect(await call('t1', { action: 'wait', session_id: started.session_id, timeout: 10 })).toMatchObject({ status: 'exited', exit_code: 0, output: 'bg-done\n' });
    expect(notices).toEqual([expect.objectContaining({ sessionId: 't1', exitCode: 0, tail: 'bg-done\n' })]);
  });

  it('refuses hardline commands and asks approval for dangerous ones, like terminal', () => {
    const { tool } = harness();
    expect(tool.refuse?.({ action: 'start', command: 'rm -rf /' })).toMatch(/never allowed/);
    expect(tool.needsApproval?.({ action: 'start', command: 'git push --force' })).toMatchObject({ patternKey: expect.any(String) });
    expect(tool.needsApproval?.({ action: 'list' })).toBeNull();
  });
});
