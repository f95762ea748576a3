import { chmod, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { createTerminalTool } from '../src/terminal/terminal-tool.ts';
import { bubblewrapSandbox, openSandbox } from '../src/sandbox/sandbox.ts';
import { SANDBOX_PATH, sandboxEnv } from '../src/sandbox/sandbox-env.ts';
import type { CallContext, Tool } from '../src/shared/tool.ts';
import { offlineContext } from './call-context.ts';
import { noneRunning, running } from './host-processes.ts';

let base: string;
let workspace: string;

function context(signal = new AbortController().signal): CallContext {
  return offlineContext({ signal, workspaceDir: workspace });
}

const run = (tool: Tool, args: unknown, ctx = context()) => tool.execute(tool.schema.parse(args), ctx);

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-terminal-'));
  // mkdtemp makes it 0700; a root worker's sandbox user (HERALD_SANDBOX_UID) must pass through it to the workspace.
  await chmod(base, 0o755);
  workspace = join(base, 'session-1');
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const SECRET_ENV = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  LANG: 'C.UTF-8',
  DATABASE_URL: 'postgres://leak',
  REDIS_URL: 'redis://leak',
  OPENAI_API_KEY: 'sk-leak',
  GITHUB_TOKEN: 'ghp-leak',
  APP_SECRET: 'leak',
  HERALD_TELEGRAM_TOKEN: 'leak',
  HERALD_WORKSPACE_ROOT: '/leak',
  GRANTED_TOOL_KEY: 'granted-value',
};

async function terminalIn(mode: 'bwrap' | 'none', grant: string[] = []): Promise<Tool> {
  const settings = { ...loadConfig({ HERALD_SANDBOX: mode }).tools.sandbox, env: grant };
  const choice = await openSandbox({ settings, env: SECRET_ENV });
  if (choice.sandbox === null) throw new Error(choice.notice);
  return createTerminalTool({ sandbox: choice.sandbox, maxTimeoutMs: 5000, outputChars: 1000 });
}

describe.each(['bwrap', 'none'] as const)('terminal (HERALD_SANDBOX=%s)', (mode) => {
  let terminal: Tool;
  beforeAll(async () => {
    terminal = await terminalIn(mode);
  });

  it('runs in the workspace (created on demand) and reports the exit code', async () => {
    expect(await run(terminal, { command: 'pwd; echo "$HOME"' })).toBe(`${await realpath(workspace)}\n${await realpath(workspace)}\n[exit code: 0]`);
    expect(await run(terminal, { command: 'echo oops >&2; exit 3' })).toBe('oops\n[exit code: 3]');
    expect(await run(terminal, { command: 'true' })).toBe('(no output)\n[exit code: 0]');
  });

  it('kills the command and the processes it started at the timeout', async () => {
    const marker = `sleep 30.${mode === 'bwrap' ? 11 : 12}1`;
    const result = await run(terminal, { command: `${marker} & wait`, timeout: 1 });
    expect(result).toMatch(/timed out after 1 s; the command and its child processes were killed/);
    expect(await noneRunning(marker)).toBe(true);
  });

  it('kills a command that ignores SIGTERM', async () => {
    const result = await run(terminal, { command: 'trap "" TERM; echo started; sleep 30.2', timeout: 1 });
    expect(result).toMatch(/^started\n\[killed by SIG(KILL|TERM); timed out after 1 s/);
    expect(await noneRunning('sleep 30.2')).toBe(true);
  });

  it('caps the timeout at the configured maximum', async () => {
    expect(await run(terminal, { command: 'echo hi', timeout: 3600 })).toBe('hi\n[exit code: 0; timeout lowered to the 5 s maximum]');
  });

  it('does not let background jobs outlive the command', async () => {
    const marker = `sleep 30.${mode === 'bwrap' ? 31 : 32}1`;
    expect(await run(terminal, { command: `${marker} & echo done` })).toBe('done\n[exit code: 0]');
    expect(await noneRunning(marker)).toBe(true);
  });

  it('keeps the head and tail of long output with a marker', async () => {
    const result = await run(terminal, { command: 'seq 1 20000' });
    expect(result.startsWith('1\n2\n3\n')).toBe(true);
    expect(result).toMatch(/\n\[\.\.\. \d+ characters of output omitted \.\.\.\]\n/);
    expect(result).toMatch(/19999\n20000\n\[exit code: 0\]$/);
    expect(result.length).toBeLessThan(1200);
  });

  it('kills everything the command started when the turn is aborted', async () => {
    const controller = new AbortController();
    const marker = `sleep 30.${mode === 'bwrap' ? 41 : 42}1`;
    const pending = run(terminal, { command: `echo started > started.txt; ${marker}` }, context(controller.signal));
    for (let i = 0; i < 100 && running(marker).length === 0; i += 1) await sleep(100);
    controller.abort(new Error('turn cancelled'));
    await expect(pending).rejects.toThrow(/turn cancelled/);
    expect(await noneRunning(marker)).toBe(true);
  });

  it('passes no secrets to the command, only locale variables and the names granted', async () => {
    const env = await run(await terminalIn(mode, ['GRANTED_TOOL_KEY']), { command: 'env' });
    expect(env).not.toMatch(/leak/);
    expect(env).toMatch(/^GRANTED_TOOL_KEY=granted-value$/m);
    expect(env).toMatch(/^LANG=C\.UTF-8$/m);
    expect(env).toContain(`HOME=${await realpath(workspace)}`);
  });

  it('sets resource limits before the command runs', async () => {
    const limits = await run(terminal, { command: 'ulimit -d; ulimit -f; ulimit -t; ulimit -c' });
    expect(limits).toBe(`${2048 * 1024}\n${1024 * 1024}\n6\n0\n[exit code: 0]`);
  });
});

describe('terminal in a sandbox without /proc (a container whose /proc is masked)', () => {
  it('runs commands and shows no process at all, the worker included', async () => {
    const settings = loadConfig({}).tools.sandbox;
    const terminal = createTerminalTool({ sandbox: bubblewrapSandbox('/usr/bin/bwrap', { settings, env: SECRET_ENV }, false), maxTimeoutMs: 5000 });
    expect(await run(terminal, { command: 'echo works; ls /proc 2>&1; cat /proc/1/environ 2>&1' })).toBe(
      "works\nls: cannot access '/proc': No such file or directory\ncat: /proc/1/environ: No such file or directory\n[exit code: 1]",
    );
  });
});

describe('terminal', () => {
  const terminal = createTerminalTool({ sandbox: null, unavailable: 'no sandbox here' });

  it('builds the environment from an allow-list of names', () => {
    expect(sandboxEnv({ PATH: '/bin', LC_ALL: 'C', TZ: 'UTC', SSH_AUTH_SOCK: '/tmp/agent', AWS_ACCESS_KEY_ID: 'x', GRANTED: 'y' }, ['GRANTED'], '/ws')).toEqual({
      PATH: SANDBOX_PATH,
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TZ: 'UTC',
      GRANTED: 'y',
      HOME: '/ws',
      PWD: '/ws',
      TMPDIR: '/tmp',
      TERM: 'dumb',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
    });
  });

  it('is not offered without a sandbox, and says why', () => {
    expect(terminal.unavailable).toBe('no sandbox here');
  });

  it('refuses hardline commands and asks approval for dangerous ones', () => {
    expect(terminal.refuse!({ command: 'sudo rm -rf /' })).toMatch(/^Refused: .*never allowed/);
    expect(terminal.refuse!({ command: 'git push --force' })).toBeNull();
    expect(terminal.needsApproval!({ command: 'git push --force' })).toEqual({
      patternKey: 'git push --force',
      reason: 'This command rewrites history on the remote (git push --force).',
    });
    expect(terminal.needsApproval!({ command: 'ls -la' })).toBeNull();
    expect(terminal.replaySafe).toBe(false);
  });
});
