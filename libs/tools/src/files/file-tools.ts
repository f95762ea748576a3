import { z } from 'zod';
import { defineTool } from '../shared/tool.ts';
import type { Tool, ToolContext } from '../shared/tool.ts';
import { READ_DEFAULT_LINES, READ_MAX_LINES, WRITE_MAX_CHARS, runFileCall } from './file-operations.ts';
import type { FileCall } from './file-operations.ts';
import { runFileCallSandboxed } from './file-sandbox.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { ensureWorkspace } from './workspace-paths.ts';

export { READ_DEFAULT_LINES, READ_MAX_LINES, READ_MAX_LINE_CHARS, WRITE_MAX_CHARS, PATCH_MAX_FILE_BYTES } from './file-operations.ts';

/** Where a file tool call is carried out: in this process, or as a program in the sandbox. */
type FileRunner = (call: FileCall, context: ToolContext) => Promise<string>;

const inProcess: FileRunner = (call, context) => runFileCall(call, context.workspaceDir, context.signal);

const readArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace'),
  offset: z.number().int().min(1).optional().describe('First line to read, 1-based (default 1)'),
  limit: z.number().int().min(1).max(READ_MAX_LINES).optional().describe(`Number of lines (default ${READ_DEFAULT_LINES})`),
});

function readFileToolRunBy(run: FileRunner) {
  return defineTool({
    name: 'read_file',
    toolset: 'file',
    description: 'Read a text file from the workspace. Returns numbered lines ("N|text"); page with offset and limit.',
    guidance: 'File paths are relative to your workspace directory, which keeps its files for the whole conversation.',
    schema: readArgs,
    replaySafe: true,
    execute: (args, context) => run({ tool: 'read_file', args }, context),
  });
}

const writeArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace; parent directories are created'),
  content: z.string().max(WRITE_MAX_CHARS).describe('The whole new content of the file'),
});

function writeFileToolRunBy(run: FileRunner) {
  return defineTool({
    name: 'write_file',
    toolset: 'file',
    description: 'Create or overwrite a file in the workspace with the given content.',
    guidance: 'To change part of an existing file, prefer patch over rewriting it with write_file.',
    schema: writeArgs,
    // Writing the same content again leaves the same file: re-running after a crash is harmless.
    replaySafe: true,
    execute: (args, context) => run({ tool: 'write_file', args }, context),
  });
}

const patchArgs = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace'),
  old_string: z.string().min(1).describe('Exact text to replace, including whitespace; must occur exactly once unless replace_all'),
  new_string: z.string().describe('Replacement text'),
  replace_all: z.boolean().optional().describe('Replace every occurrence (default false)'),
});

function patchToolRunBy(run: FileRunner) {
  return defineTool({
    name: 'patch',
    toolset: 'file',
    description: 'Replace exact text in a workspace file. old_string must match exactly once unless replace_all=true.',
    guidance: 'Before patch, read the file so old_string matches it exactly; include enough context to make it unique.',
    schema: patchArgs,
    // A second application may hit text the first one produced (or fail with "0 matches"), so a
    // resumed turn reports "outcome unknown" instead of patching again.
    replaySafe: false,
    execute: (args, context) => run({ tool: 'patch', args }, context),
  });
}

const searchArgs = z.object({
  pattern: z.string().min(1).max(1000).describe("content: a regular expression (JavaScript syntax). files: a glob like '*.ts' or part of a name"),
  target: z.enum(['content', 'files']).optional().describe("Default 'content'"),
  path: z.string().min(1).optional().describe('Directory (or file) to search, relative to the workspace (default: the whole workspace)'),
});

function searchFilesToolRunBy(run: FileRunner) {
  return defineTool({
    name: 'search_files',
    toolset: 'file',
    description:
      "Search the workspace: file contents by regex (returns file:line: text), or with target 'files' file names by glob or " + 'substring. Skips .git, node_modules, binary and huge files.',
    guidance: 'Use search_files to find files and code instead of listing directories through terminal.',
    schema: searchArgs,
    replaySafe: true,
    execute: (args, context) => run({ tool: 'search_files', args }, context),
  });
}

/** The four file tools, carried out by `run`. */
function createFileTools(run: FileRunner) {
  return [readFileToolRunBy(run), writeFileToolRunBy(run), patchToolRunBy(run), searchFilesToolRunBy(run)] as const;
}

/** The file tools in this process, confined on the opened descriptor only (HERALD_SANDBOX=none, tests). */
export const fileTools = createFileTools(inProcess);
export const [readFileTool, writeFileTool, patchTool, searchFilesTool] = fileTools;

/**
 * The file tools as a worker offers them. With bubblewrap each call runs as a program in the
 * terminal's sandbox, so a flaw in the descriptor checks still meets the namespaces; with
 * HERALD_SANDBOX=none they run here. Without a sandbox they are not offered, and `unavailable` says why.
 */
export function offeredFileTools(sandbox: Sandbox | null, unavailable: string | undefined): Tool[] {
  if (sandbox === null || unavailable !== undefined) return fileTools.map((tool) => ({ ...tool, unavailable: unavailable ?? 'no sandbox' }));
  if (sandbox.runNode === undefined) return [...fileTools];
  const runNode = sandbox.runNode.bind(sandbox);
  return [...createFileTools(async (call, context) => runFileCallSandboxed(runNode, call, await ensureWorkspace(context.workspaceDir), context.signal))];
}
