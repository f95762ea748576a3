import { runFileCall } from './file-operations.ts';
import type { FileCall } from './file-operations.ts';
import { WorkspacePathError } from './workspace-paths.ts';

/*
 * The program a file tool call runs as inside the bubblewrap sandbox (file-sandbox.ts): the call as
 * JSON on stdin, the reply as JSON on stdout. It sees the session's workspace and the tools
 * package's own code, nothing of the worker; the descriptor checks still run here, as a second wall.
 */

/** The reply on stdout: the tool's text, or the error the tool would have thrown. */
export type FileReply = { ok: true; text: string } | { ok: false; error: string; pathError: boolean };

async function readInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<void> {
  const { call, workspace } = JSON.parse(await readInput()) as { call: FileCall; workspace: string };
  let reply: FileReply;
  try {
    reply = { ok: true, text: await runFileCall(call, workspace, new AbortController().signal) };
  } catch (error) {
    reply = { ok: false, error: (error as Error).message, pathError: error instanceof WorkspacePathError };
  }
  process.stdout.write(JSON.stringify(reply));
}

await main();
