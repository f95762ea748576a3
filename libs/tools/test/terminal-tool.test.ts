import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTerminalTool, terminalEnv } from '../src/terminal-tool.ts';
import type { CallContext, Tool } from '../src/tool.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { offlineContext } from './call-context.ts';

let base: string;
let workspace: string;

function context(signal = new AbortController().signal): CallContext {
  return offlineContext({ signal, workspaceDir: workspace });
}

const run = (tool: Tool, args: unknown, ctx = context()) => tool.execute(tool.schema.parse(args), ctx);

/** Zombies count as dead: the container's init may be slow to reap reparented children. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function waitDead(pid: number): Promise<boolean> {
  return waitFor(async () => !alive(pid), { what: `process ${pid} gone` });
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-terminal-'));
  workspace = join(base, 'session-1');
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('terminal', () => {
  const terminal = createTerminalTool({ maxTimeoutMs: 5000, outputChars: 1000 });

  it('runs in the workspace (created on demand) and reports the exit code', async () => {
    expect(await run(terminal, { command: 'pwd; echo "$HOME"' })).toBe(`${await realpath(workspace)}\n${await realpath(workspace)}\n[exit code: 0]`);
    expect(await run(terminal, { command: 'echo oops >&2; exit 3' })).toBe('oops\n[exit code: 3]');
    expect(await run(terminal, { command: 'true' })).toBe('(no output)\n[exit code: 0]');
  });

  it('kills the command and the processes it started at the timeout', async () => {
    const result = await run(terminal, { command: 'sleep 30 & echo $! > child.pid; wait', timeout: 1 });
    expect(result).toMatch(/timed out after 1 s; the command and its child processes were killed/);
    const child = Number(await readFile(join(workspace, 'child.pid'), 'utf8'));
    expect(await waitDead(child)).toBe(true);
  });

  it('kills a command that ignores SIGTERM', async () => {
    const result = await run(terminal, { command: 'trap "" TERM; echo started; sleep 30', timeout: 1 });
    expect(result).toMatch(/^started\n\[killed by SIGKILL; timed out after 1 s/);
  });

  it('caps the timeout at the configured maximum', async () => {
    expect(await run(terminal, { command: 'echo hi', timeout: 3600 })).toBe('hi\n[exit code: 0; timeout lowered to the 5 s maximum]');
  });

  it('does not let background jobs outlive the command', async () => {
    const result = await run(terminal, { command: 'sleep 30 & echo $! > bg.pid; echo done' });
    expect(result).toBe('done\n[exit code: 0]');
    expect(await waitDead(Number(await readFile(join(workspace, 'bg.pid'), 'utf8')))).toBe(true);
  });

  it('keeps the head and tail of long output with a marker', async () => {
    const result = await run(terminal, { command: 'seq 1 20000' });
    expect(result.startsWith('1\n2\n3\n')).toBe(true);
    expect(result).toMatch(/\n\[\.\.\. \d+ characters of output omitted \.\.\.\]\n/);
    expect(result).toMatch(/19999\n20000\n\[exit code: 0\]$/);
    expect(result.length).toBeLessThan(1200);
  });

  it('kills the process group when the turn is aborted', async () => {
    const controller = new AbortController();
    const pending = run(terminal, { command: 'echo $$ > shell.pid; sleep 30' }, context(controller.signal));
    const shell = await waitFor(async () => Number(await readFile(join(workspace, 'shell.pid'), 'utf8')) || undefined, { what: 'the shell running' });
    controller.abort(new Error('turn cancelled'));
    await expect(pending).rejects.toThrow(/turn cancelled/);
    expect(await waitDead(shell)).toBe(true);
  });

  it('passes no secrets to the command', async () => {
    const secretive = createTerminalTool({
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        LANG: 'C.UTF-8',
        DATABASE_URL: 'postgres://leak',
        REDIS_URL: 'redis://leak',
        OPENAI_API_KEY: 'sk-leak',
        GITHUB_TOKEN: 'ghp-leak',
        APP_SECRET: 'leak',
        HERALD_TELEGRAM_TOKEN: 'leak',
        HERALD_WORKSPACE_ROOT: '/leak',
      },
    });
    const env = await run(secretive, { command: 'env' });
    expect(env).not.toMatch(/leak/);
    expect(env).toMatch(/^PATH=\/usr\/local\/bin:\/usr\/bin:\/bin$/m);
    expect(env).toMatch(/^LANG=C\.UTF-8$/m);
    expect(env).toContain(`HOME=${await realpath(workspace)}`);
  });

  it('builds the environment from an allowlist of names', () => {
    expect(terminalEnv({ PATH: '/bin', LC_ALL: 'C', TZ: 'UTC', SSH_AUTH_SOCK: '/tmp/agent', AWS_ACCESS_KEY_ID: 'x' }, '/ws')).toEqual({
      PATH: '/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TZ: 'UTC',
      HOME: '/ws',
      PWD: '/ws',
      TERM: 'dumb',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
    });
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
