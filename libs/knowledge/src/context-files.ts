import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { scanForInjection } from './injection-scan.ts';

/** One project context file as it enters the prompt: already scanned and cut. */
export interface ContextFile {
  name: string;
  content: string;
}

/**
 * Hermes' cap when no context length is known: 20,000 characters per file, of which 70% head and
 * 20% tail are kept, with a marker pointing the model at the whole file.
 */
export const CONTEXT_FILE_MAX_CHARS = 20_000;
/** Bytes read of one file at most; beyond the cap only the head and tail are used anyway. */
const READ_LIMIT_BYTES = 1_000_000;
const CURSOR_RULES_DIR = '.cursor/rules';
const MAX_CURSOR_RULES = 20;

/**
 * Hermes' order, first match wins and only one kind loads: AGENTS.md (or agents.md), else CLAUDE.md
 * (or claude.md), else .cursorrules with .cursor/rules/*.mdc. Only the workspace itself is read,
 * never a parent directory.
 */
const KINDS: readonly (readonly string[])[] = [
  ['AGENTS.md', 'agents.md'],
  ['CLAUDE.md', 'claude.md'],
];

/**
 * Reads a regular file without following a symlink: the workspace is written by sandboxed commands,
 * and a link to a worker's own files must not carry them into a prompt. Null when absent or not a
 * plain file.
 */
async function readPlainFile(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return null;
    const buffer = Buffer.alloc(Math.min(stat.size, READ_LIMIT_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Hermes' truncation: 70% head, 20% tail, and a marker telling the model where the rest is. */
export function truncateContextFile(name: string, content: string, maxChars = CONTEXT_FILE_MAX_CHARS): string {
  if (content.length <= maxChars) return content;
  const head = content.slice(0, Math.floor(maxChars * 0.7));
  const tail = content.slice(content.length - Math.floor(maxChars * 0.2));
  const marker = `\n\n[... ${content.length - head.length - tail.length} characters of ${name} left out; read the whole file with read_file("${name}") ...]\n\n`;
  return head + marker + tail;
}

/** Scanned before it is cut, so an injection in the part left out still blocks the file. */
function prepared(name: string, raw: string, maxChars: number): ContextFile | null {
  const content = raw.trim();
  if (content === '') return null;
  const reason = scanForInjection(content);
  if (reason !== undefined) return { name, content: `[BLOCKED: ${name} contained potential prompt injection (${reason}). Content not loaded.]` };
  return { name, content: truncateContextFile(name, content, maxChars) };
}

async function cursorRules(workspace: string, maxChars: number): Promise<ContextFile[]> {
  const files: ContextFile[] = [];
  const legacy = await readPlainFile(join(workspace, '.cursorrules'));
  const first = legacy === null ? null : prepared('.cursorrules', legacy, maxChars);
  if (first) files.push(first);
  let entries: string[] = [];
  try {
    entries = (await readdir(join(workspace, CURSOR_RULES_DIR)))
      .filter((name) => name.endsWith('.mdc'))
      .sort()
      .slice(0, MAX_CURSOR_RULES);
  } catch {
    entries = [];
  }
  for (const entry of entries) {
    const name = `${CURSOR_RULES_DIR}/${entry}`;
    const raw = await readPlainFile(join(workspace, name));
    const file = raw === null ? null : prepared(name, raw, maxChars);
    if (file) files.push(file);
  }
  return files;
}

/**
 * The project context files of a session's workspace, read once when the session's prompt is
 * built: a change mid-session applies from the next session, like memory. Each file is scanned
 * for injection; a file that trips the scanner is replaced whole by a `[BLOCKED: ...]` line.
 */
export async function readContextFiles(workspace: string, maxChars = CONTEXT_FILE_MAX_CHARS): Promise<ContextFile[]> {
  for (const names of KINDS) {
    for (const name of names) {
      const raw = await readPlainFile(join(workspace, name));
      const file = raw === null ? null : prepared(name, raw, maxChars);
      if (file) return [file];
    }
  }
  return cursorRules(workspace, maxChars);
}
