import { open, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import vm from 'node:vm';
import type { WorkspacePath } from './workspace-paths.ts';

export const SEARCH_MAX_MATCHES = 100;
export const SEARCH_MAX_FILES_LISTED = 200;
export const SEARCH_MAX_FILE_BYTES = 2_000_000;
export const SEARCH_MAX_FILES_SCANNED = 20_000;
/** The model's regex runs on the worker's event loop; a catastrophic pattern is cut off after this. */
export const SEARCH_TIME_BUDGET_MS = 10_000;
const SHOWN_LINE_CHARS = 300;
/** Directories nobody means to search by default; searching inside one by path still works. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

interface SearchRequest {
  base: WorkspacePath;
  pattern: string;
  target: 'content' | 'files';
  signal: AbortSignal;
  budgetMs?: number;
}

/** Symlinks are not followed: they could lead outside the workspace or into a loop. */
async function* walk(dir: string, signal: AbortSignal): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    signal.throwIfAborted();
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* walk(path, signal);
    } else if (entry.isFile()) {
      yield path;
    }
  }
}

async function* candidates(base: WorkspacePath, signal: AbortSignal): AsyncGenerator<string> {
  const info = await stat(base.absolute).catch(() => null);
  if (!info) throw new Error(`${base.display} does not exist`);
  if (info.isFile()) yield base.absolute;
  else yield* walk(base.absolute, signal);
}

/** Turns a glob (`*`, `?`, `**`) into a regex over a relative path. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    const char = glob[i]!;
    if (char === '*') {
      if (glob[i + 1] === '*') {
        source += '.*';
        i += 1;
        if (glob[i + 1] === '/') i += 1;
      } else source += '[^/]*';
    } else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'i');
}

function findFiles(pattern: string): (relativePath: string) => boolean {
  if (/[*?]/.test(pattern)) {
    const regex = globToRegExp(pattern);
    // A pattern without a slash matches the file name wherever the file is, as `find -name` does.
    if (!pattern.includes('/')) return (path) => regex.test(path.slice(path.lastIndexOf('/') + 1));
    return (path) => regex.test(path);
  }
  const needle = pattern.toLowerCase();
  return (path) => path.toLowerCase().includes(needle);
}

async function readText(path: string): Promise<string | null> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > SEARCH_MAX_FILE_BYTES) return null;
    const buffer = await handle.readFile();
    if (buffer.subarray(0, 8192).includes(0)) return null;
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

const SCAN = new vm.Script(`
  (() => {
    const found = [];
    const lines = text.split('\\n');
    for (let i = 0; i < lines.length && found.length < max; i += 1) {
      re.lastIndex = 0;
      if (re.test(lines[i])) found.push([i + 1, lines[i]]);
    }
    return found;
  })()
`);

export async function searchFiles({ base, pattern, target, signal, budgetMs = SEARCH_TIME_BUDGET_MS }: SearchRequest): Promise<string> {
  const shownPath = (path: string) => relative(base.root, path) || '.';
  if (target === 'files') {
    const matches = findFiles(pattern);
    const found: string[] = [];
    let more = false;
    for await (const path of candidates(base, signal)) {
      const rel = shownPath(path);
      if (!matches(rel)) continue;
      if (found.length >= SEARCH_MAX_FILES_LISTED) {
        more = true;
        break;
      }
      found.push(rel);
    }
    if (found.length === 0) return `No files matching '${pattern}' under ${base.display}.`;
    return found.join('\n') + (more ? `\n[stopped at ${SEARCH_MAX_FILES_LISTED} files; narrow the pattern or path]` : '');
  }

  try {
    new RegExp(pattern);
  } catch (error) {
    throw new Error(`invalid regular expression: ${(error as Error).message}`);
  }
  const context = vm.createContext({ re: null, text: '', max: 0 });
  // Compile inside the context so the regex runs under the script timeout.
  vm.runInContext(`re = new RegExp(${JSON.stringify(pattern)})`, context);
  const deadline = Date.now() + budgetMs;
  const lines: string[] = [];
  let scanned = 0;
  let skipped = 0;
  let stopped: string | null = null;
  for await (const path of candidates(base, signal)) {
    if (scanned >= SEARCH_MAX_FILES_SCANNED) {
      stopped = `stopped after scanning ${SEARCH_MAX_FILES_SCANNED} files; narrow the path`;
      break;
    }
    scanned += 1;
    const text = await readText(path).catch(() => null);
    if (text === null) {
      skipped += 1;
      continue;
    }
    context.text = text;
    context.max = SEARCH_MAX_MATCHES - lines.length + 1;
    let hits: [number, string][];
    try {
      hits = SCAN.runInContext(context, { timeout: Math.max(1, deadline - Date.now()) }) as [number, string][];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
      stopped = `stopped: the search took longer than ${budgetMs / 1000} s; simplify the pattern or narrow the path`;
      break;
    }
    for (const [line, content] of hits) {
      if (lines.length >= SEARCH_MAX_MATCHES) {
        stopped = `stopped at ${SEARCH_MAX_MATCHES} matches; narrow the pattern or path`;
        break;
      }
      const shown = content.length > SHOWN_LINE_CHARS ? `${content.slice(0, SHOWN_LINE_CHARS)}...` : content;
      lines.push(`${shownPath(path)}:${line}: ${shown}`);
    }
    if (stopped) break;
  }
  const notes: string[] = [];
  if (stopped) notes.push(stopped);
  if (skipped > 0) notes.push(`${skipped} binary or larger than ${SEARCH_MAX_FILE_BYTES} bytes file(s) skipped`);
  const footer = notes.length > 0 ? `\n[${notes.join('; ')}]` : '';
  if (lines.length === 0) return `No matches for /${pattern}/ under ${base.display}.${footer}`;
  return lines.join('\n') + footer;
}
