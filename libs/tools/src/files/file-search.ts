import { join } from 'node:path';
import { RegexBudgetExceeded, RegexScanner } from './regex-scanner.ts';
import { listDirectoryInside, openFileInside, openInside } from './workspace-files.ts';
import { WorkspacePathError } from './workspace-paths.ts';
import type { WorkspacePath } from './workspace-paths.ts';

export const SEARCH_MAX_MATCHES = 100;
export const SEARCH_MAX_FILES_LISTED = 200;
export const SEARCH_MAX_FILE_BYTES = 2_000_000;
export const SEARCH_MAX_FILES_SCANNED = 20_000;
/** The whole regex scan of one call; it runs on a worker thread, which is terminated after this. */
export const SEARCH_TIME_BUDGET_MS = 10_000;
const SHOWN_LINE_CHARS = 300;
/** Files go to the regex thread in batches of about this many characters. */
const BATCH_CHARS = 4_000_000;
/** Directories nobody means to search by default; searching inside one by path still works. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

interface SearchRequest {
  base: WorkspacePath;
  pattern: string;
  target: 'content' | 'files';
  signal: AbortSignal;
  budgetMs?: number;
}

function child(parent: WorkspacePath, name: string): WorkspacePath {
  const absolute = join(parent.absolute, name);
  return { absolute, display: parent.display === '.' ? name : join(parent.display, name), root: parent.root };
}

/** Symlinks are not followed: they could lead outside the workspace or into a loop. */
async function* walk(dir: WorkspacePath, signal: AbortSignal): AsyncGenerator<WorkspacePath> {
  let entries;
  try {
    entries = await listDirectoryInside(dir);
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    signal.throwIfAborted();
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* walk(child(dir, entry.name), signal);
    } else if (entry.isFile()) {
      yield child(dir, entry.name);
    }
  }
}

async function* candidates(base: WorkspacePath, signal: AbortSignal): AsyncGenerator<WorkspacePath> {
  const { handle, info } = await openInside(base).catch((error: unknown) => {
    if (error instanceof WorkspacePathError && /does not exist/.test(error.message)) throw new Error(`${base.display} does not exist`);
    throw error;
  });
  await handle.close();
  if (info.isFile()) yield base;
  else yield* walk(base, signal);
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

/** The file's text, or null when it is skipped: binary, too large, or refused by the confinement. */
async function readText(path: WorkspacePath): Promise<string | null> {
  const opened = await openFileInside(path).catch(() => null);
  if (opened === null) return null;
  try {
    if (opened.size > SEARCH_MAX_FILE_BYTES) return null;
    const buffer = await opened.handle.readFile();
    if (buffer.subarray(0, 8192).includes(0)) return null;
    return buffer.toString('utf8');
  } finally {
    await opened.handle.close();
  }
}

async function listFiles(base: WorkspacePath, pattern: string, signal: AbortSignal): Promise<string> {
  const matches = findFiles(pattern);
  const found: string[] = [];
  for await (const path of candidates(base, signal)) {
    if (!matches(path.display)) continue;
    if (found.length >= SEARCH_MAX_FILES_LISTED) {
      return `${found.join('\n')}\n[stopped at ${SEARCH_MAX_FILES_LISTED} files; narrow the pattern or path]`;
    }
    found.push(path.display);
  }
  if (found.length === 0) return `No files matching '${pattern}' under ${base.display}.`;
  return found.join('\n');
}

/** What a content search found, and why it stopped early if it did. */
interface ContentScan {
  lines: string[];
  skipped: number;
  stopped: string | null;
}

/** Reads files in order and hands them to the regex thread in batches. */
class BatchedScan implements ContentScan {
  lines: string[] = [];
  skipped = 0;
  stopped: string | null = null;
  readonly #scanner: RegexScanner;
  #batch: [number, string][] = [];
  #names: string[] = [];
  #chars = 0;

  constructor(scanner: RegexScanner) {
    this.#scanner = scanner;
  }

  async add(path: WorkspacePath): Promise<void> {
    const text = await readText(path);
    if (text === null) {
      this.skipped += 1;
      return;
    }
    this.#batch.push([this.#names.length, text]);
    this.#names.push(path.display);
    this.#chars += text.length;
    if (this.#chars >= BATCH_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#batch.length === 0) return;
    const hits = await this.#scanner.scan(this.#batch, SEARCH_MAX_MATCHES - this.lines.length + 1, SHOWN_LINE_CHARS);
    for (const [file, line, content] of hits) {
      if (this.lines.length >= SEARCH_MAX_MATCHES) {
        this.stopped = `stopped at ${SEARCH_MAX_MATCHES} matches; narrow the pattern or path`;
        break;
      }
      this.lines.push(`${this.#names[file]}:${line}: ${content}`);
    }
    this.#batch = [];
    this.#names = [];
    this.#chars = 0;
  }
}

async function scanContent(base: WorkspacePath, scanner: RegexScanner, signal: AbortSignal, budgetMs: number): Promise<ContentScan> {
  const scan = new BatchedScan(scanner);
  let scanned = 0;
  try {
    for await (const path of candidates(base, signal)) {
      if (scanned >= SEARCH_MAX_FILES_SCANNED) {
        scan.stopped = `stopped after scanning ${SEARCH_MAX_FILES_SCANNED} files; narrow the path`;
        break;
      }
      scanned += 1;
      await scan.add(path);
      if (scan.stopped) break;
    }
    if (!scan.stopped) await scan.flush();
  } catch (error) {
    if (!(error instanceof RegexBudgetExceeded)) throw error;
    scan.stopped = `stopped: the search took too long (over ${budgetMs / 1000} s) and was cut off; simplify the pattern or narrow the path`;
  }
  return scan;
}

export async function searchFiles({ base, pattern, target, signal, budgetMs = SEARCH_TIME_BUDGET_MS }: SearchRequest): Promise<string> {
  if (target === 'files') return listFiles(base, pattern, signal);
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new Error(`invalid regular expression: ${(error as Error).message}`);
  }
  const scanner = new RegexScanner(pattern, budgetMs, signal);
  let scan: ContentScan;
  try {
    scan = await scanContent(base, scanner, signal, budgetMs);
  } finally {
    await scanner.close();
  }
  const notes: string[] = [];
  if (scan.stopped) notes.push(scan.stopped);
  if (scan.skipped > 0) notes.push(`${scan.skipped} binary, linked or larger than ${SEARCH_MAX_FILE_BYTES} bytes file(s) skipped`);
  const footer = notes.length > 0 ? `\n[${notes.join('; ')}]` : '';
  if (scan.lines.length === 0) return `No matches for /${pattern}/ under ${base.display}.${footer}`;
  return scan.lines.join('\n') + footer;
}
