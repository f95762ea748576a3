import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { WorkspacePathError, resolveWorkspacePath } from './workspace-paths.ts';
import { openFileInside, writeWorkspaceFile } from './workspace-files.ts';
import { searchFiles } from './file-search.ts';

/*
 * What the file tools do, apart from their schemas: this module and what it imports use nothing but
 * Node's own modules, because it also runs as the sandboxed child (file-sandbox-entry.ts), where
 * only the tools package's own files are visible.
 */

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

/** The tools' arguments once their schemas (file-tools.ts) have checked them. */
export interface ReadFileArgs {
  path: string;
  offset?: number | undefined;
  limit?: number | undefined;
}

export interface WriteFileArgs {
  path: string;
  content: string;
}

export interface PatchArgs {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean | undefined;
}

export interface SearchFilesArgs {
  pattern: string;
  target?: 'content' | 'files' | undefined;
  path?: string | undefined;
}

/** One file tool call, as the worker hands it to the sandboxed child (JSON on its stdin). */
export type FileCall = { tool: 'read_file'; args: ReadFileArgs } | { tool: 'write_file'; args: WriteFileArgs } | { tool: 'patch'; args: PatchArgs } | { tool: 'search_files'; args: SearchFilesArgs };

async function readFileCall(args: ReadFileArgs, workspaceDir: string): Promise<string> {
  const target = await resolveWorkspacePath(workspaceDir, args.path);
  const { handle } = await openFileInside(target);
  try {
    if (await looksBinary(handle)) throw new WorkspacePathError(`${target.display} is a binary file; read_file shows text only`);
    const offset = args.offset ?? 1;
    const { lines, total, more } = await numberedLines(handle, offset, args.limit ?? READ_DEFAULT_LINES);
    if (total === 0) return `${target.display} is empty.`;
    if (lines.length === 0) return `${target.display} has ${total} lines; offset ${offset} is past the end.`;
    const last = offset + lines.length - 1;
    const footer = more ? `\n[lines ${offset}-${last} shown; more follow: read_file with offset=${last + 1}]` : `\n[end of file, ${last} lines]`;
    return lines.join('\n') + footer;
  } finally {
    await handle.close();
  }
}

async function writeFileCall(args: WriteFileArgs, workspaceDir: string): Promise<string> {
  const target = await resolveWorkspacePath(workspaceDir, args.path);
  await writeWorkspaceFile(target, args.content);
  const lines = args.content === '' ? 0 : args.content.split('\n').length;
  return `Wrote ${Buffer.byteLength(args.content)} bytes (${lines} lines) to ${target.display}.`;
}

async function patchCall(args: PatchArgs, workspaceDir: string): Promise<string> {
  if (args.old_string === args.new_string) throw new Error('old_string and new_string are identical; nothing to change');
  const target = await resolveWorkspacePath(workspaceDir, args.path);
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
    throw new Error(`old_string was not found in ${target.display} (0 matches). Read the file and copy the text exactly, including indentation and line breaks.`);
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
}

async function searchCall(args: SearchFilesArgs, workspaceDir: string, signal: AbortSignal): Promise<string> {
  const base = await resolveWorkspacePath(workspaceDir, args.path ?? '.');
  return searchFiles({ base, pattern: args.pattern, target: args.target ?? 'content', signal });
}

/** Runs one call in this process, with the descriptor checks of workspace-files.ts. */
export function runFileCall(call: FileCall, workspaceDir: string, signal: AbortSignal): Promise<string> {
  switch (call.tool) {
    case 'read_file':
      return readFileCall(call.args, workspaceDir);
    case 'write_file':
      return writeFileCall(call.args, workspaceDir);
    case 'patch':
      return patchCall(call.args, workspaceDir);
    case 'search_files':
      return searchCall(call.args, workspaceDir, signal);
  }
}
