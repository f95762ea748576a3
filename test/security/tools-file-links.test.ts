import { spawn } from 'node:child_process';
import { chmod, link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { createTerminalTool, openSandbox, patchTool, readFileTool, searchFilesTool, writeFileTool } from '@herald/tools';
import type { CallContext, Tool } from '@herald/tools';
import { offlineContext } from '../../libs/tools/test/call-context.ts';

/*
 * Issue 17, point 13: the file tools refuse hard links and symlinks that leave the workspace, and
 * the check is made on the opened file descriptor, not on the path: a path can be re-pointed
 * between a check and the open by a command running in the same workspace, a descriptor cannot.
 */

let base: string;
let workspace: string;
let outside: string;
const SECRET = 'outside secret\n';

const context = (): CallContext => offlineContext({ workspaceDir: workspace });
const run = (tool: Tool, args: unknown) => tool.execute(tool.schema.parse(args), context());

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-links-'));
  // mkdtemp makes it 0700; a root worker's sandbox user (HERALD_SANDBOX_UID) must pass through it to the workspace.
  await chmod(base, 0o755);
  workspace = join(base, 'workspaces', 'main', 'session-1');
  outside = join(base, 'outside');
  await mkdir(workspace, { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), SECRET);
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('hard links', () => {
  it('are refused for read, write and patch, and skipped by search, whatever their other name', async () => {
    await link(join(outside, 'secret.txt'), join(workspace, 'hard.txt'));
    await expect(run(readFileTool, { path: 'hard.txt' })).rejects.toThrow(/hard\.txt has 2 hard links: another name for the same file may be outside your workspace; refused/);
    await expect(run(writeFileTool, { path: 'hard.txt', content: 'overwritten' })).rejects.toThrow(/hard links/);
    await expect(run(patchTool, { path: 'hard.txt', old_string: 'outside', new_string: 'patched' })).rejects.toThrow(/hard links/);
    const found = await run(searchFilesTool, { pattern: 'outside secret' });
    expect(found).toMatch(/^No matches .*\n\[1 binary, linked or larger than \d+ bytes file\(s\) skipped\]$/);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });
});

describe('symlinks leaving the workspace', () => {
  it('are refused on the opened file, for files and directories', async () => {
    await symlink(join(outside, 'secret.txt'), join(workspace, 'soft.txt'));
    await symlink(outside, join(workspace, 'softdir'));
    await expect(run(readFileTool, { path: 'soft.txt' })).rejects.toThrow(/symlink that leads outside your workspace/);
    await expect(run(readFileTool, { path: 'softdir/secret.txt' })).rejects.toThrow(/symlink that leads outside your workspace/);
    await expect(run(writeFileTool, { path: 'soft.txt', content: 'x' })).rejects.toThrow(/symlink/);
    await expect(run(writeFileTool, { path: 'softdir/new.txt', content: 'x' })).rejects.toThrow(/symlink that leads outside your workspace/);
    await expect(run(searchFilesTool, { pattern: 'secret', path: 'softdir' })).rejects.toThrow(/symlink that leads outside your workspace/);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });

  it('made inside the sandbox are judged in the worker: the target is outside the workspace there', async () => {
    const settings = loadConfig({}).tools.sandbox;
    const choice = await openSandbox({ settings, env: { PATH: '/usr/bin:/bin' } });
    if (choice.sandbox === null) throw new Error(choice.notice);
    const terminal = createTerminalTool({ sandbox: choice.sandbox });
    const made = await run(terminal, { command: 'ln /etc/passwd hard-passwd 2>&1; ln -s /etc/passwd soft-passwd && echo linked' });
    // A hard link across the sandbox's mounts is impossible; the symlink is made, then refused.
    expect(made).toMatch(/Invalid cross-device link/);
    expect(made).toContain('linked');
    await expect(run(readFileTool, { path: 'soft-passwd' })).rejects.toThrow(/symlink that leads outside your workspace/);
  });

  it('still work when they stay inside', async () => {
    await mkdir(join(workspace, 'real'), { recursive: true });
    await writeFile(join(workspace, 'real', 'in.txt'), 'inside\n');
    await symlink(join(workspace, 'real'), join(workspace, 'alias'));
    expect(await run(readFileTool, { path: 'alias/in.txt' })).toContain('1|inside');
    expect(await run(writeFileTool, { path: 'alias/new.txt', content: 'ok' })).toMatch(/Wrote 2 bytes/);
    expect(await readFile(join(workspace, 'real', 'new.txt'), 'utf8')).toBe('ok');
  });
});

describe('a link swapped in while the tools run', () => {
  it('never lets a read or a write through to the outside file', async () => {
    const swapper = join(workspace, 'race');
    await mkdir(swapper);
    // Another process flips race/t between an inside file and a symlink to the secret, as fast as it can.
    const loop = spawn('bash', ['-c', `cd ${JSON.stringify(swapper)}; while true; do echo inside > t.new; mv -f t.new t; ln -sfn ${JSON.stringify(join(outside, 'secret.txt'))} t; done`], {
      stdio: 'ignore',
    });
    try {
      let reads = 0;
      let refusals = 0;
      for (let i = 0; i < 300; i += 1) {
        const outcome = await run(readFileTool, { path: 'race/t' }).then(
          (text) => text,
          (error: Error) => `refused: ${error.message}`,
        );
        expect(outcome).not.toContain('outside secret');
        if (outcome.startsWith('refused')) refusals += 1;
        else reads += 1;
        await run(writeFileTool, { path: 'race/t', content: `write ${i}\n` }).catch(() => undefined);
      }
      // Both sides of the race were seen: the check ran against a moving target.
      expect(reads + refusals).toBe(300);
      expect(refusals).toBeGreaterThan(0);
    } finally {
      loop.kill('SIGKILL');
    }
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  });
});

describe('special files', () => {
  it('a FIFO in the workspace is refused instead of hanging the read', async () => {
    const made = spawn('mkfifo', [join(workspace, 'pipe')]);
    await new Promise((resolve) => made.once('exit', resolve));
    await expect(run(readFileTool, { path: 'pipe' })).rejects.toThrow(/pipe is not a regular file/);
    await expect(run(writeFileTool, { path: 'pipe', content: 'x' })).rejects.toThrow(/pipe is not a regular file/);
  });
});
