import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { defineTool } from './tool.ts';
import type { Tool } from './tool.ts';
import { WorkspacePathError, resolveWorkspacePath } from './workspace-paths.ts';
import { openFileInside, writeWorkspaceFile } from './workspace-files.ts';
import { searchFiles } from './file-search.ts';

export const READ_DEFAULT_LINES = 500;
export const READ_MAX_LINES = 2000;
/** Longer lines are cut: minified files would otherwise fill the context with one line. */
export const READ_MAX_LINE_CHARS = 2000;
/** write_file and patch keep files the model edits to a size it can also read back. */
export const WRITE_MAX_CHARS = 1_000_000;
export const PATCH_MAX_FILE_BYTES = 5_000_000;

async function looksBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(8192);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}

/** Numbered lines of an open file, from line `offset`, at most `limit`, and whether more follow. */
async function numberedLines(handle: FileHandle, offset: number, limit: number): Promise<{ lines: string[]; total: number; more: boolean }> {
  const lines: string[] = [];
  let total = 0;
  const reader = createInterface({ input: handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false }), crlfDelay: Infinity });
  try {
    for await (const line of reader) {
      total += 1;
      if (total < offset) continue;
      if (lines.length >= limit) return { lines, total, more: true };
      const shown = line.length > READ_MAX_LINE_CHARS ? `${line.slice(0, READ_MAX_LINE_CHARS)} [line cut at ${READ_MAX_LINE_CHARS} chars]` : line;
      lines.push(`${total}|${shown}`);
    }
  } finally {
    reader.close();
  }
  return { lines, total, more: false };
}

const readArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace'),
  offset: z.number().int().min(1).optional().describe('First line to read, 1-based (default 1)'),
  limit: z.number().int().min(1).max(READ_MAX_LINES).optional().describe(`Number of lines (default ${READ_DEFAULT_LINES})`),
});

export const readFileTool = defineTool({
  name: 'read_file',
  toolset: 'file',
  description: 'Read a text file from the workspace. Returns numbered lines ("N|text"); page with offset and limit.',
  guidance:
    'File paths are relative to your workspace directory, which keeps its files for the whole conversation.',
  schema: readArgs,
  replaySafe: true,
  async execute(args, context) {
    const target = await resolveWorkspacePath(context.workspaceDir, args.path);
    const { handle } = await openFileInside(target);
    try {
      if (await looksBinary(handle)) throw new WorkspacePathError(`${target.display} is a binary file; read_file shows text only`);
      const offset = args.offset ?? 1;
      const { lines, total, more } = await numberedLines(handle, offset, args.limit ?? READ_DEFAULT_LINES);
      if (total === 0) return `${target.display} is empty.`;
      if (lines.length === 0) return `${target.display} has ${total} lines; offset ${offset} is past the end.`;
      const last = offset + lines.length - 1;
      const footer = more
        ? `\n[lines ${offset}-${last} shown; more follow: read_file with offset=${last + 1}]`
        : `\n[end of file, ${last} lines]`;
      return lines.join('\n') + footer;
    } finally {
      await handle.close();
    }
  },
});

const writeArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace; parent directories are created'),
  content: z.string().max(WRITE_MAX_CHARS).describe('The whole new content of the file'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  toolset: 'file',
  description: 'Create or overwrite a file in the workspace with the given content.',
  guidance: 'To change part of an existing file, prefer patch over rewriting it with write_file.',
  schema: writeArgs,
  // Writing the same content again leaves the same file: re-running after a crash is harmless.
  replaySafe: true,
  async execute(args, context) {
    const target = await resolveWorkspacePath(context.workspaceDir, args.path);
    await writeWorkspaceFile(target, args.content);
    const lines = args.content === '' ? 0 : args.content.split('\n').length;
    return `Wrote ${Buffer.byteLength(args.content)} bytes (${lines} lines) to ${target.display}.`;
  },
});

const patchArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace'),
  old_string: z.string().min(1).describe('Exact text to replace, including whitespace; must occur exactly once unless replace_all'),
  new_string: z.string().describe('Replacement text'),
  replace_all: z.boolean().optional().describe('Replace every occurrence (default false)'),
});

function countOccurrences(text: string, needle: string): number[] {
  const positions: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) positions.push(at);
  return positions;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

export const patchTool = defineTool({
  name: 'patch',
  toolset: 'file',
  description: 'Replace exact text in a workspace file. old_string must match exactly once unless replace_all=true.',
  guidance: 'Before patch, read the file so old_string matches it exactly; include enough context to make it unique.',
  schema: patchArgs,
  // A second application may hit text the first one produced (or fail with "0 matches"), so a
  // resumed turn reports "outcome unknown" instead of patching again.
  replaySafe: false,
  async execute(args, context) {
    if (args.old_string === args.new_string) throw new Error('old_string and new_string are identical; nothing to change');
    const target = await resolveWorkspacePath(context.workspaceDir, args.path);
    const { handle, size } = await openFileInside(target);
    let text: string;
    try {
      if (size > PATCH_MAX_FILE_BYTES) throw new Error(`${target.display} is ${size} bytes; patch edits files up to ${PATCH_MAX_FILE_BYTES} bytes`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const positions = countOccurrences(text, args.old_string);
    if (positions.length === 0) {
      throw new Error(
        `old_string was not found in ${target.display} (0 matches). Read the file and copy the text exactly, including indentation and line breaks.`,
      );
    }
    if (positions.length > 1 && args.replace_all !== true) {
      const lines = positions.slice(0, 10).map((at) => lineOf(text, at));
      throw new Error(
        `old_string matches ${positions.length} times in ${target.display} (lines ${lines.join(', ')}${positions.length > 10 ? ', ...' : ''}). ` +
          'Add surrounding lines to make it unique, or set replace_all=true to replace every occurrence.',
      );
    }
    const updated = text.split(args.old_string).join(args.new_string);
    await writeWorkspaceFile(target, updated);
    const lines = positions.map((at) => lineOf(text, at));
    return `Replaced ${positions.length} occurrence${positions.length === 1 ? '' : 's'} in ${target.display} (line${lines.length === 1 ? '' : 's'} ${lines.slice(0, 20).join(', ')}).`;
  },
});

const searchArgs = z.object({
  pattern: z.string().min(1).max(1000).describe("content: a regular expression (JavaScript syntax). files: a glob like '*.ts' or part of a name"),
  target: z.enum(['content', 'files']).optional().describe("'content' (default): search inside files. 'files': find files by name"),
  path: z.string().min(1).optional().describe('Directory (or file) to search, relative to the workspace (default: the whole workspace)'),
});

export const searchFilesTool = defineTool({
  name: 'search_files',
  toolset: 'file',
  description:
    "Search the workspace. target='content' (default): regex over file contents, returns file:line: text. " +
    "target='files': file names matching a glob or substring. Skips .git, node_modules, binary and huge files.",
  guidance: 'Use search_files to find files and code instead of listing directories through terminal.',
  schema: searchArgs,
  replaySafe: true,
  async execute(args, context) {
    const base = await resolveWorkspacePath(context.workspaceDir, args.path ?? '.');
    return searchFiles({ base, pattern: args.pattern, target: args.target ?? 'content', signal: context.signal });
  },
});

export const fileTools = [readFileTool, writeFileTool, patchTool, searchFilesTool] as const;

/**
 * The file tools as a worker offers them. They run in the worker, confined on the opened descriptor
 * (workspace-files.ts), but share the workspace with the terminal: where the terminal has no
 * sandbox they are not offered either, and `unavailable` says why.
 */
export function offeredFileTools(unavailable: string | undefined): Tool[] {
  return fileTools.map((tool) => (unavailable === undefined ? tool : { ...tool, unavailable }));
}
