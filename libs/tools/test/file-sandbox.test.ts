import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { offeredFileTools } from '../src/files/file-tools.ts';
import { bubblewrapSandbox, openSandbox } from '../src/sandbox/sandbox.ts';
import type { CallContext, Tool } from '../src/shared/tool.ts';
import { offlineContext } from './call-context.ts';

/*
 * The file tools as a worker with bubblewrap offers them: each call is a program in the sandbox.
 * The descriptor checks run there too; these tests show what the sandbox adds around them.
 */

const WORKER_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', DATABASE_URL: 'postgres://leak@db/herald', OPENAI_API_KEY: 'sk-leak' };

let base: string;
let workspace: string;
let outside: string;
let tools: Record<string, Tool>;

function context(signal = new AbortController().signal): CallContext {
  return offlineContext({ signal, workspaceDir: workspace });
}

const run = (name: string, args: unknown, ctx = context()) => tools[name]!.execute(tools[name]!.schema.parse(args), ctx);

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-file-sandbox-'));
  // mkdtemp makes it 0700; a root worker's sandbox user (HERALD_SANDBOX_UID) must pass through it to the workspace.
  await chmod(base, 0o755);
  workspace = join(base, 'workspaces', 'session-1');
  outside = join(base, 'outside');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'top secret\n');
  const choice = await openSandbox({ settings: loadConfig({ HERALD_SANDBOX: 'bwrap' }).tools.sandbox, env: WORKER_ENV });
  if (choice.sandbox === null) throw new Error(choice.notice);
  tools = Object.fromEntries(offeredFileTools(choice.sandbox, undefined).map((tool) => [tool.name, tool]));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Host processes running the sandboxed file tool entry for `home` (node itself, not the bwrap around it). */
function fileToolProcesses(home: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        if (argv[0] !== process.execPath || !argv.some((arg) => arg.includes('file-sandbox-entry'))) return false;
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`HOME=${home}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('file tools in the bubblewrap sandbox', () => {
  it('read, write, patch and search the workspace as before', async () => {
    expect(await run('write_file', { path: 'notes/a.txt', content: 'one\ntwo\n' })).toMatch(/Wrote 8 bytes .* to notes\/a.txt/);
    expect(await readFile(join(workspace, 'notes/a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await run('patch', { path: 'notes/a.txt', old_string: 'two', new_string: 'three' })).toMatch(/Replaced 1 occurrence .*line 2/);
    expect(await run('read_file', { path: 'notes/a.txt' })).toBe('1|one\n2|three\n[end of file, 2 lines]');
    expect(await run('search_files', { pattern: 'thr+ee' })).toBe('notes/a.txt:2: three');
    expect(await run('search_files', { pattern: '*.txt', target: 'files' })).toBe('notes/a.txt');
    await expect(run('read_file', { path: 'missing.txt' })).rejects.toThrow(/missing.txt does not exist/);
  });

  it("cannot read the worker's /proc/<pid>/environ or a file outside, by path, symlink or hard link", async () => {
    const environ = `/proc/${process.pid}/environ`;
    await expect(run('read_file', { path: environ })).rejects.toThrow(/outside your workspace/);
    await symlink(environ, join(workspace, 'environ'));
    await symlink(join(outside, 'secret.txt'), join(workspace, 'secret-link'));
    await link(join(outside, 'secret.txt'), join(workspace, 'secret-hard'));
    for (const path of ['environ', 'secret-link', 'secret-hard']) {
      const outcome = await run('read_file', { path }).then(String, (error: Error) => error.message);
      expect(outcome).toMatch(/refused|does not exist/);
      expect(outcome).not.toMatch(/leak|top secret/);
    }
    // Run as root, the sandbox's user does not own the outside file and cannot even open it for writing.
    await expect(run('write_file', { path: 'secret-hard', content: 'x' })).rejects.toThrow(process.getuid?.() === 0 ? /hard links|permission denied/ : /hard links/);
    expect(await run('search_files', { pattern: 'top s.cret|postgres:' })).toMatch(/^No matches/);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('runs as a process in its own PID namespace, with the allow-listed environment and only the workspace', async () => {
    // A catastrophic pattern keeps the call running long enough to look at its process from outside.
    await writeFile(join(workspace, 'slow.txt'), `${'a'.repeat(40)}b\n`);
    const home = await realpath(workspace);
    const controller = new AbortController();
    const call = run('search_files', { pattern: '(a+)+$' }, context(controller.signal)).catch((error: Error) => error);
    let pids: number[] = [];
    for (let i = 0; i < 200 && pids.length === 0; i += 1) {
      await sleep(50);
      pids = fileToolProcesses(home);
    }
    expect(pids.length).toBeGreaterThan(0);
    const pid = pids[0]!;
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ.join('\n')).not.toMatch(/DATABASE_URL|OPENAI_API_KEY|leak/);
    // NSpid lists the pid in each namespace from the host's down: two entries, the sandbox's own.
    const nspid = readFileSync(`/proc/${pid}/status`, 'utf8')
      .match(/^NSpid:\s+(.*)$/m)![1]!
      .split(/\s+/);
    expect(nspid.length).toBeGreaterThan(1);
    // Its root shows the workspace but not the directory next to it, nor this repository's config.
    expect(existsSync(`/proc/${pid}/root${workspace}`)).toBe(true);
    expect(existsSync(`/proc/${pid}/root${outside}`)).toBe(false);
    expect(existsSync(`/proc/${pid}/root${join(process.cwd(), '.env')}`)).toBe(false);
    controller.abort();
    await call;
    for (let i = 0; i < 50 && fileToolProcesses(home).length > 0; i += 1) await sleep(100);
    expect(fileToolProcesses(home)).toEqual([]);
  });
});

describe('file tools in the sandbox without /proc (a container with a masked /proc)', () => {
  it('still read and write, confined by path instead of /proc/self/fd', async () => {
    const settings = loadConfig({ HERALD_SANDBOX: 'bwrap' }).tools.sandbox;
    const offered = offeredFileTools(bubblewrapSandbox('/usr/bin/bwrap', { settings, env: WORKER_ENV }, false), undefined);
    const byName = Object.fromEntries(offered.map((tool) => [tool.name, tool]));
    const call = (name: string, args: unknown) => byName[name]!.execute(byName[name]!.schema.parse(args), context());
    expect(await call('write_file', { path: 'noproc.txt', content: 'x\n' })).toMatch(/Wrote 2 bytes/);
    expect(await call('read_file', { path: 'noproc.txt' })).toContain('1|x');
    await symlink(join(outside, 'secret.txt'), join(workspace, 'noproc-link'));
    await expect(call('read_file', { path: 'noproc-link' })).rejects.toThrow(/refused|does not exist/);
  });
});
