import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patchTool, readFileTool, searchFilesTool, writeFileTool } from '../src/files/file-tools.ts';
import { SEARCH_MAX_MATCHES, searchFiles } from '../src/files/file-search.ts';
import { resolveWorkspacePath } from '../src/files/workspace-paths.ts';
import { ToolRegistry } from '../src/shared/registry.ts';
import { ToolGate } from '../src/shared/tool-gate.ts';
import type { CallContext, Tool } from '../src/shared/tool.ts';
import { offlineContext } from './call-context.ts';

let base: string;
let workspace: string;
let outside: string;

function context(dir = workspace): CallContext {
  return offlineContext({ workspaceDir: dir });
}

const run = (tool: Tool, args: unknown, ctx = context()) => tool.execute(tool.schema.parse(args), ctx);

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'herald-file-tools-'));
  workspace = join(base, 'workspaces', 'session-1');
  outside = join(base, 'outside');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'top secret\n');
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('confinement to the workspace', () => {
  it('creates the workspace on first use and writes relative paths inside it', async () => {
    expect(await run(writeFileTool, { path: 'notes/a.txt', content: 'one\ntwo\n' })).toMatch(/Wrote 8 bytes .* to notes\/a.txt/);
    expect(await readFile(join(workspace, 'notes/a.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('accepts an absolute path only when it is inside the workspace', async () => {
    expect(await run(readFileTool, { path: join(workspace, 'notes/a.txt') })).toContain('1|one');
    await expect(run(readFileTool, { path: '/etc/passwd' })).rejects.toThrow(/outside your workspace/);
    await expect(run(writeFileTool, { path: join(outside, 'x.txt'), content: 'x' })).rejects.toThrow(/outside your workspace/);
  });

  it('refuses .. traversal out of the workspace', async () => {
    await expect(run(readFileTool, { path: '../../etc/passwd' })).rejects.toThrow(/leaves your workspace/);
    await expect(run(readFileTool, { path: '../../../outside/secret.txt' })).rejects.toThrow(/leaves your workspace/);
    await expect(run(writeFileTool, { path: 'notes/../../escape.txt', content: 'x' })).rejects.toThrow(/leaves your workspace/);
    // Climbing inside the workspace is fine.
    expect(await run(readFileTool, { path: 'notes/../notes/a.txt' })).toContain('2|two');
  });

  it('refuses a symlinked file that points outside', async () => {
    await symlink(join(outside, 'secret.txt'), join(workspace, 'link.txt'));
    await expect(run(readFileTool, { path: 'link.txt' })).rejects.toThrow(/symlink that leads outside/);
    await expect(run(writeFileTool, { path: 'link.txt', content: 'x' })).rejects.toThrow(/symlink/);
    await expect(run(patchTool, { path: 'link.txt', old_string: 'top', new_string: 'x' })).rejects.toThrow(/symlink/);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('refuses a symlinked directory that points outside, for reads, writes and search', async () => {
    await symlink(outside, join(workspace, 'linkdir'));
    await expect(run(readFileTool, { path: 'linkdir/secret.txt' })).rejects.toThrow(/symlink that leads outside/);
    await expect(run(writeFileTool, { path: 'linkdir/new.txt', content: 'x' })).rejects.toThrow(/symlink that leads outside/);
    await expect(run(writeFileTool, { path: 'linkdir/deeper/new.txt', content: 'x' })).rejects.toThrow(/symlink that leads outside/);
    await expect(run(searchFilesTool, { pattern: 'secret', path: 'linkdir' })).rejects.toThrow(/symlink that leads outside/);
    // A whole-workspace search does not follow the link either.
    expect(await run(searchFilesTool, { pattern: 'top secret' })).toMatch(/^No matches/);
  });

  it('refuses writing through a dangling symlink', async () => {
    await symlink(join(outside, 'not-yet.txt'), join(workspace, 'dangling.txt'));
    await expect(run(writeFileTool, { path: 'dangling.txt', content: 'x' })).rejects.toThrow(/symlink/);
    await expect(readFile(join(outside, 'not-yet.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('allows a symlink that stays inside the workspace', async () => {
    await symlink(join(workspace, 'notes'), join(workspace, 'inner'));
    expect(await run(readFileTool, { path: 'inner/a.txt' })).toContain('1|one');
  });

  it('reports the refusal to the model as a tool error through the registry', async () => {
    const registry = new ToolRegistry().register(readFileTool);
    const gate = new ToolGate({ registry, offered: ['read_file'], permitted: ['read_file'], approvalTimeoutMs: 1000 });
    const outcome = await gate.execute({ id: 'c1', name: 'read_file', arguments: JSON.stringify({ path: '../../etc/passwd' }) }, context());
    expect(outcome).toEqual({ isError: true, errorKind: 'failed', content: expect.stringMatching(/leaves your workspace/) });
  });
});

describe('read_file', () => {
  it('pages through numbered lines with offset and limit', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
    await run(writeFileTool, { path: 'long.txt', content: lines });
    const page = await run(readFileTool, { path: 'long.txt', offset: 11, limit: 5 });
    expect(page.split('\n').slice(0, 5)).toEqual(['11|line 11', '12|line 12', '13|line 13', '14|line 14', '15|line 15']);
    expect(page).toContain('read_file with offset=16');
    expect(await run(readFileTool, { path: 'long.txt', offset: 28 })).toMatch(/30\|line 30\n\[end of file, 30 lines\]$/);
    expect(await run(readFileTool, { path: 'long.txt', offset: 99 })).toMatch(/offset 99 is past the end/);
  });

  it('refuses binary files, directories and missing files with a hint', async () => {
    await writeFile(join(workspace, 'blob.bin'), Buffer.from([1, 2, 0, 3]));
    await expect(run(readFileTool, { path: 'blob.bin' })).rejects.toThrow(/binary/);
    await expect(run(readFileTool, { path: 'notes' })).rejects.toThrow(/is a directory.*search_files/);
    await expect(run(readFileTool, { path: 'nope.txt' })).rejects.toThrow(/does not exist/);
  });
});

describe('patch', () => {
  it('replaces a unique match and reports the line', async () => {
    await run(writeFileTool, { path: 'code.ts', content: 'const a = 1;\nconst b = 2;\nconst b2 = 2;\n' });
    expect(await run(patchTool, { path: 'code.ts', old_string: 'const a = 1;', new_string: 'const a = 10;' })).toMatch(/Replaced 1 occurrence in code.ts \(line 1\)/);
    expect(await readFile(join(workspace, 'code.ts'), 'utf8')).toBe('const a = 10;\nconst b = 2;\nconst b2 = 2;\n');
  });

  it('names the count and the lines when old_string is ambiguous, and changes nothing', async () => {
    await expect(run(patchTool, { path: 'code.ts', old_string: '= 2;', new_string: '= 3;' })).rejects.toThrow(/matches 2 times in code.ts \(lines 2, 3\).*replace_all=true/);
    expect(await readFile(join(workspace, 'code.ts'), 'utf8')).toContain('const b = 2;');
  });

  it('says 0 matches when old_string is absent', async () => {
    await expect(run(patchTool, { path: 'code.ts', old_string: 'const c', new_string: 'x' })).rejects.toThrow(/not found in code.ts \(0 matches\)/);
  });

  it('replaces every occurrence with replace_all', async () => {
    expect(await run(patchTool, { path: 'code.ts', old_string: '= 2;', new_string: '= 3;', replace_all: true })).toMatch(/Replaced 2 occurrences/);
    expect(await readFile(join(workspace, 'code.ts'), 'utf8')).toBe('const a = 10;\nconst b = 3;\nconst b2 = 3;\n');
  });

  it('treats old_string literally, not as a pattern', async () => {
    await run(writeFileTool, { path: 'regex.txt', content: 'price: $1.00 (a+b)\n' });
    await run(patchTool, { path: 'regex.txt', old_string: '$1.00 (a+b)', new_string: '$2' });
    expect(await readFile(join(workspace, 'regex.txt'), 'utf8')).toBe('price: $2\n');
  });
});

describe('search_files', () => {
  let searchDir: string;
  beforeAll(async () => {
    searchDir = join(base, 'search-ws');
    await mkdir(join(searchDir, 'src/deep'), { recursive: true });
    await mkdir(join(searchDir, 'node_modules/pkg'), { recursive: true });
    await writeFile(join(searchDir, 'src/a.ts'), 'export const alpha = 1;\n// TODO: beta\n');
    await writeFile(join(searchDir, 'src/deep/b.ts'), 'const beta = 2; // TODO\n');
    await writeFile(join(searchDir, 'src/notes.md'), 'TODO in markdown\n');
    await writeFile(join(searchDir, 'node_modules/pkg/index.js'), '// TODO vendored\n');
    await writeFile(join(searchDir, 'image.bin'), Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 0, 0])]));
    await writeFile(join(searchDir, 'many.txt'), Array.from({ length: 500 }, (_, i) => `match ${i}`).join('\n'));
  });

  it('finds content with file:line and skips node_modules and binary files', async () => {
    const found = await run(searchFilesTool, { pattern: 'TODO' }, context(searchDir));
    expect(found.split('\n').filter((line) => !line.startsWith('['))).toEqual(['src/a.ts:2: // TODO: beta', 'src/deep/b.ts:1: const beta = 2; // TODO', 'src/notes.md:1: TODO in markdown']);
    expect(found).toContain('1 binary, linked or larger');
    // Searching inside a skipped directory by path works.
    expect(await run(searchFilesTool, { pattern: 'TODO', path: 'node_modules' }, context(searchDir))).toContain('node_modules/pkg/index.js:1:');
  });

  it('stops at the match limit and says so', async () => {
    const found = await run(searchFilesTool, { pattern: '^match \\d+$', path: 'many.txt' }, context(searchDir));
    const lines = found.split('\n');
    expect(lines.filter((line) => line.startsWith('many.txt:'))).toHaveLength(SEARCH_MAX_MATCHES);
    expect(lines.at(-1)).toMatch(/stopped at 100 matches/);
  });

  it('finds files by glob or by part of the name', async () => {
    expect(await run(searchFilesTool, { pattern: '*.ts', target: 'files' }, context(searchDir))).toBe('src/a.ts\nsrc/deep/b.ts');
    expect(await run(searchFilesTool, { pattern: 'src/**/*.ts', target: 'files' }, context(searchDir))).toBe('src/a.ts\nsrc/deep/b.ts');
    expect(await run(searchFilesTool, { pattern: 'NOTES', target: 'files' }, context(searchDir))).toBe('src/notes.md');
  });

  it('cuts off a catastrophic regex instead of blocking the worker', async () => {
    await writeFile(join(searchDir, 'redos.txt'), `${'a'.repeat(40)}!\n`);
    const found = await searchFiles({
      base: await resolveWorkspacePath(searchDir, 'redos.txt'),
      pattern: '^(a+)+$',
      target: 'content',
      signal: new AbortController().signal,
      budgetMs: 200,
    });
    expect(found).toMatch(/No matches.*took too long \(over 0.2 s\) and was cut off; simplify the pattern/s);
  });

  it('rejects an invalid regex with the reason', async () => {
    await expect(run(searchFilesTool, { pattern: '(unclosed' }, context(searchDir))).rejects.toThrow(/invalid regular expression/);
  });
});
