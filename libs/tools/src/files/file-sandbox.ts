import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FileCall } from './file-operations.ts';
import type { FileReply } from './file-sandbox-entry.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { WorkspacePathError } from './workspace-paths.ts';
import { SEARCH_TIME_BUDGET_MS } from './file-search.ts';

/** Start-up, file reading and writing around the regex budget; the search's own budget still cuts the regex off. */
const CALL_TIMEOUT_MS = SEARCH_TIME_BUDGET_MS + 50_000;
/** read_file's largest answer (2000 lines of 2000 characters) with room for JSON escapes. */
const REPLY_CHARS = 20_000_000;

/**
 * How this package's entry is run. Compiled (dist/*.js, the image): plain `node`. From source
 * (tests, `npm run dev`): node with the tsx loader, as the worker itself runs, with the
 * repository's node_modules shown read-only for it; no tsx exists in the image.
 */
function entryCommand(): { nodeArgs: string[]; readOnlyPaths: string[] } {
  const here = fileURLToPath(import.meta.url);
  // Compiled, the sandbox shows the code two levels up (cli/dist/ for the bundle); from source, the
  // package: three levels up from src/files/.
  if (here.endsWith('.js')) return { nodeArgs: [join(dirname(here), 'file-sandbox-entry.js')], readOnlyPaths: [dirname(dirname(here))] };
  const packageDir = dirname(dirname(dirname(here)));
  const require = createRequire(import.meta.url);
  const loader = require.resolve('tsx/esm');
  const modules = loader.slice(0, loader.lastIndexOf('/node_modules/') + '/node_modules'.length);
  return { nodeArgs: ['--import', loader, join(dirname(here), 'file-sandbox-entry.ts')], readOnlyPaths: [packageDir, modules] };
}

let command: ReturnType<typeof entryCommand> | undefined;

/** Runs one file tool call as a program inside the sandbox and returns its text or throws its error. */
export async function runFileCallSandboxed(runNode: NonNullable<Sandbox['runNode']>, call: FileCall, workspace: string, signal: AbortSignal): Promise<string> {
  command ??= entryCommand();
  const result = await runNode({
    ...command,
    input: JSON.stringify({ call, workspace }),
    workspace,
    timeoutMs: CALL_TIMEOUT_MS,
    outputChars: REPLY_CHARS,
    signal,
  });
  let reply: FileReply;
  try {
    reply = JSON.parse(result.output) as FileReply;
  } catch {
    const why = result.timedOut ? 'timed out' : result.exitCode !== null ? `exited with ${result.exitCode}` : `was killed by ${result.signal ?? 'a signal'}`;
    const detail = (result.errors ?? '').trim().split('\n').slice(-1)[0] ?? '';
    throw new Error(`the sandboxed ${call.tool} ${why}${detail === '' ? '' : `: ${detail}`}`);
  }
  if (reply.ok) return reply.text;
  throw reply.pathError ? new WorkspacePathError(reply.error) : new Error(reply.error);
}
