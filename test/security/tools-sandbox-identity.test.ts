import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { createTerminalTool, offeredFileTools, openSandbox } from '@herald/tools';
import type { Sandbox } from '@herald/tools';
import { offlineContext } from '../../libs/tools/test/call-context.ts';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from '../support/fake-llm.ts';
import { startHeraldProcess, startStack } from '../support/stack.ts';
import type { HeraldProcess, Stack } from '../support/stack.ts';

/*
 * Issue 39, point 1 and the sandbox LOWs of point 7: the sandbox never maps to a privileged id
 * outside. We run as root here and in CI, so these run for real: a root worker's commands run as
 * HERALD_SANDBOX_UID/GID (61000 by default) on the host as well as inside, cannot set a setuid or
 * setgid bit, cannot create user namespaces, and the process, memory and file limits hold.
 */

const isRoot = process.getuid?.() === 0;
const SANDBOX_UID = 61_000;
/** An account that is neither root nor the sandbox's: "any unprivileged account" of the finding. */
const OTHER_UID = 12_345;
const WORKER_ENV = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', HERALD_API_TOKEN: 'api-token-leak' };

/** Runs a program on the host as another unprivileged account, as the finding's attacker would. */
function asOtherAccount(file: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(file, args, { uid: OTHER_UID, gid: OTHER_UID, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}${result.error?.message ?? ''}` };
}

describe.runIf(isRoot)('the sandbox of a root worker (issue 39, point 1)', () => {
  let base: string;
  let sandbox: Sandbox;
  const run = async (command: string, workspace: string, userNamespaces = false) => {
    const result = await sandbox.run({ command, workspace, network: false, userNamespaces, timeoutMs: 20_000, outputChars: 20_000, signal: new AbortController().signal });
    return result.output;
  };
  const workspaceNamed = async (name: string) => {
    const dir = join(base, name);
    await mkdir(dir, { mode: 0o700 });
    return dir;
  };

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'herald-identity-'));
    await chmod(base, 0o755);
    const settings = loadConfig({ HERALD_SANDBOX_MAX_PROCESSES: '24', HERALD_SANDBOX_MEMORY_MB: '64', HERALD_SANDBOX_MAX_FILE_MB: '1' }).tools.sandbox;
    const choice = await openSandbox({ settings, env: WORKER_ENV, workspaceRoot: base });
    expect(choice.notice).toBeNull();
    sandbox = choice.sandbox!;
    expect(sandbox.user).toEqual({ uid: SANDBOX_UID, gid: SANDBOX_UID, switched: true });
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('runs commands as the unprivileged sandbox user outside as well as inside, with no groups', async () => {
    const workspace = await workspaceNamed('ids');
    const output = await run('id -u; id -g; id -G; touch made-here; sleep 1 & cat /proc/self/status | grep -E "^(Uid|Gid|Groups|CapEff):"', workspace);
    expect(output.split('\n').slice(0, 3)).toEqual([String(SANDBOX_UID), String(SANDBOX_UID), String(SANDBOX_UID)]);
    expect(output).toMatch(/^CapEff:\s+0+$/m);
    const made = await stat(join(workspace, 'made-here'));
    expect([made.uid, made.gid]).toEqual([SANDBOX_UID, SANDBOX_UID]);
    // The workspace itself is the sandbox user's, and nobody else's to enter.
    const dir = await stat(workspace);
    expect([dir.uid, dir.mode & 0o7777]).toEqual([SANDBOX_UID, 0o700]);
  });

  it('plants `cp /usr/bin/bash rootsh; chmod 4755 rootsh` and it stays harmless on the host', async () => {
    const workspace = await workspaceNamed('plant');
    const output = await run(
      'cp /usr/bin/bash rootsh; chmod 4755 rootsh; echo "chmod=$?"; chmod g+s rootsh; echo "setgid=$?"; ' +
        'install -m 6755 /usr/bin/true installed; echo "install=$?"; grep " $PWD " /proc/self/mountinfo',
      workspace,
    );
    expect(output).toContain('chmod=1');
    expect(output).toContain('setgid=1');
    expect(output).toContain('install=1');
    expect(output).toMatch(/Operation not permitted/);
    // Bound nosuid and nodev inside: a setuid file there would do nothing in the sandbox either.
    expect(output).toMatch(/ rw,nosuid,nodev/);
    const planted = await stat(join(workspace, 'rootsh'));
    expect(planted.mode & 0o6000).toBe(0);
    expect(planted.uid).toBe(SANDBOX_UID);
    expect(planted.uid).not.toBe(0);
    // Another account on the host cannot even reach it: the workspace is 0700 and not theirs.
    const attempt = asOtherAccount(join(workspace, 'rootsh'), ['-p', '-c', 'id -u; cat /proc/1/environ']);
    expect(attempt.status).not.toBe(0);
    expect(attempt.output).toMatch(/EACCES|Permission denied/);
  });

  it('cannot create a user namespace (`unshare -r` fails) unless its toolset asks for them', async () => {
    const workspace = await workspaceNamed('userns');
    const closed = await run('unshare -r id -u; echo "unshare=$?"; unshare -U true; echo "plain=$?"', workspace);
    expect(closed).toContain('unshare=1');
    expect(closed).toContain('plain=1');
    expect(closed).not.toMatch(/^0$/m);
    const granted = await run('unshare -r id -u; echo "unshare=$?"', workspace, true);
    expect(granted).toContain('unshare=0');
  });

  it('holds the process limit although the worker is root', async () => {
    const workspace = await workspaceNamed('procs');
    const output = await run('for i in $(seq 60); do sleep 3 & done 2>&1 | head -3; ls -d /proc/[0-9]* | wc -l', workspace);
    expect(output).toMatch(/Resource temporarily unavailable/);
    const processes = Number(output.trim().split('\n').at(-1));
    expect(processes).toBeLessThanOrEqual(24);
  });

  it("counts each sandbox's processes on their own: three sessions at once each start 18 under a limit of 24", async () => {
    const workspaces = await Promise.all(['one', 'two', 'three'].map(workspaceNamed));
    const outputs = await Promise.all(workspaces.map((workspace) => run('for i in $(seq 18); do sleep 2 & done; echo "started=$(jobs -p | wc -l)"; wait', workspace)));
    expect(outputs.map((output) => output.trim())).toEqual(['started=18', 'started=18', 'started=18']);
  });

  it('holds the memory and file size limits although the worker is root', async () => {
    const workspace = await workspaceNamed('memory');
    const output = await run('(x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo "length=${#x}"); echo "memory=$?"; head -c 3000000 /dev/zero > big; echo "file=$?"', workspace);
    // bash cannot grow the string past the 64 MB data limit and dies in the subshell.
    expect(output).toMatch(/cannot allocate/);
    expect(output).not.toMatch(/length=200000000/);
    expect(output).not.toContain('memory=0');
    // SIGXFSZ at the 1 MB file limit.
    expect(output).toMatch(/file=153/);
    expect((await stat(join(workspace, 'big'))).size).toBeLessThanOrEqual(1024 * 1024);
  });

  it('keeps the file tools working at the smallest process limit, where the limit now holds for the commands', async () => {
    const settings = loadConfig({ HERALD_SANDBOX_MAX_PROCESSES: '8' }).tools.sandbox;
    const small = (await openSandbox({ settings, env: WORKER_ENV, workspaceRoot: base })).sandbox!;
    const [, writeFile, , searchFiles] = offeredFileTools(small, undefined);
    const context = offlineContext({ workspaceDir: join(base, 'profile-b', 'session-files') });
    expect(await writeFile!.execute(writeFile!.schema.parse({ path: 'notes.md', content: 'limits hold' }), context)).toMatch(/Wrote/);
    expect(await searchFiles!.execute(searchFiles!.schema.parse({ pattern: 'limits' }), context)).toContain('notes.md:1: limits hold');
    const terminal = createTerminalTool({ sandbox: small, maxTimeoutMs: 10_000 });
    const forks = await terminal.execute(terminal.schema.parse({ command: 'for i in $(seq 20); do sleep 2 & done 2>&1 | head -1' }), context);
    expect(forks).toMatch(/Resource temporarily unavailable/);
  });

  it('turns the tools off with a clear message where the sandbox user cannot reach the workspace root', async () => {
    const closed = join(base, 'closed');
    await mkdir(closed, { mode: 0o700 });
    const settings = loadConfig({}).tools.sandbox;
    const choice = await openSandbox({ settings, env: WORKER_ENV, workspaceRoot: join(closed, 'workspaces') });
    expect(choice.sandbox).toBeNull();
    expect(choice.notice).toMatch(/the worker runs as root, and bubblewrap cannot create a sandbox as the unprivileged user 61000:61000 .*Permission denied.*run the worker as an unprivileged user/);
  });

  it('creates each session workspace 0700, owned by the sandbox user, and narrows an old wide one', async () => {
    const terminal = createTerminalTool({ sandbox, maxTimeoutMs: 10_000 });
    const fresh = join(base, 'profile-a', 'session-new');
    const reply = await terminal.execute(terminal.schema.parse({ command: 'echo hi > note.txt; stat -c %a .' }), offlineContext({ workspaceDir: fresh }));
    expect(reply).toMatch(/^700$/m);
    const info = await stat(fresh);
    expect([info.uid, info.mode & 0o7777]).toEqual([SANDBOX_UID, 0o700]);
    // A workspace made by an older version, 0755 and root's, is narrowed and handed over.
    const old = join(base, 'profile-a', 'session-old');
    await mkdir(old, { mode: 0o755 });
    await chmod(old, 0o755);
    await terminal.execute(terminal.schema.parse({ command: 'touch ok' }), offlineContext({ workspaceDir: old }));
    const narrowed = await stat(old);
    expect([narrowed.uid, narrowed.mode & 0o7777]).toEqual([SANDBOX_UID, 0o700]);
  });
});

/**
 * The model runs the command in the person's message ("run: <command>") and reports the output.
 */
function runAndReport(request: FakeRequest) {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `output:\n${last.content}` };
  const command = /^run: ([\s\S]*)$/.exec(request.lastUserText)?.[1];
  return command === undefined ? { text: 'nothing to run' } : { toolCalls: [{ name: 'terminal', arguments: { command } }] };
}

describe.runIf(isRoot)('the setuid plant of the finding, through a real root worker', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let worker: HeraldProcess | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = runAndReport;
    stack = await startStack({ workers: 0, env: { HERALD_MODEL: 'openai/gpt-test', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-identity-key' } });
    worker = await startHeraldProcess('worker', { ...stack.env, OPENAI_API_KEY: 'sk-identity-key' });
    expect(worker!.output()).toContain('terminal and file tools run in a bubblewrap sandbox');
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
    await worker?.exited;
    await stack.stop();
    await fake.close();
  });

  it('`cat /usr/bin/bash > rootsh; chmod 4755 rootsh` leaves no setuid file, and nothing of root, on the host', async () => {
    const response = await stack.post('/v1/messages?wait=60', {
      chat_id: 'plant',
      user_id: 'u1',
      text: 'run: cat /usr/bin/bash > rootsh; chmod 4755 rootsh; echo "chmod=$?"; echo "pwd=$PWD"; id -u',
    });
    expect(response.status).toBe(200);
    const text = response.body.reply.text as string;
    // The guard let it through (no approval): the sandbox is what holds.
    expect(text).toContain('chmod=1');
    expect(text).toMatch(new RegExp(`^${SANDBOX_UID}$`, 'm'));
    const workspace = /pwd=(\S+)/.exec(text)![1]!;
    const planted = await stat(join(workspace, 'rootsh'));
    expect(planted.mode & 0o6000).toBe(0);
    expect([planted.uid, planted.gid]).toEqual([SANDBOX_UID, SANDBOX_UID]);
    const dir = await stat(workspace);
    expect([dir.uid, dir.mode & 0o7777]).toEqual([SANDBOX_UID, 0o700]);
    // The account of the finding runs it: it cannot reach the file, let alone gain root or read the worker's environ.
    const attempt = asOtherAccount(join(workspace, 'rootsh'), ['-p', '-c', `cat /proc/${worker!.child.pid}/environ`]);
    expect(attempt.status).not.toBe(0);
    expect(attempt.output).not.toContain('sk-identity-key');
  });
});
