import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** A path the model asked for that lies outside its workspace; the message says what to do instead. */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError';
}

export interface WorkspacePath {
  /** The absolute path to use for the file system call. */
  absolute: string;
  /** The path relative to the workspace, for messages to the model ('.' for the workspace itself). */
  display: string;
  /** The workspace directory's real path. */
  root: string;
}

/** Creates the session's workspace on first use and returns its real path. */
export async function ensureWorkspace(workspaceDir: string): Promise<string> {
  await mkdir(workspaceDir, { recursive: true });
  return realpath(workspaceDir);
}

function inside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Resolves a path the model gave against the session's workspace. Relative paths resolve inside it;
 * absolute paths are accepted only when they already point inside. Every existing component of the
 * path is resolved with realpath, so a symlink (file or directory) leading out of the workspace is
 * refused even when the lexical path looks fine.
 */
export async function resolveWorkspacePath(workspaceDir: string, requested: string): Promise<WorkspacePath> {
  if (requested.includes('\0')) throw new WorkspacePathError('path contains a NUL byte');
  const root = await ensureWorkspace(workspaceDir);
  const lexicalRoot = resolve(workspaceDir);
  const trimmed = requested.trim() === '' ? '.' : requested;
  let absolute: string;
  if (isAbsolute(trimmed)) {
    absolute = resolve(trimmed);
    // The workspace may be reached through a symlinked parent (/tmp on macOS, say); accept both spellings.
    if (inside(lexicalRoot, absolute)) absolute = resolve(root, relative(lexicalRoot, absolute));
    else if (!inside(root, absolute)) {
      throw new WorkspacePathError(
        `${requested} is outside your workspace. Use a path relative to the workspace (your working directory).`,
      );
    }
  } else {
    absolute = resolve(root, trimmed);
    if (!inside(root, absolute)) {
      throw new WorkspacePathError(`${requested} leaves your workspace ('..' may not climb above it). Use a path inside the workspace.`);
    }
  }
  const display = relative(root, absolute) || '.';
  // Walk from the workspace down to the target: each existing component must really be inside.
  const parts = relative(root, absolute).split(sep).filter((part) => part !== '');
  let current = root;
  for (const part of parts) {
    current = resolve(current, part);
    let real: string;
    try {
      real = await realpath(current);
    } catch (error) {
      if (code(error) === 'ENOENT') {
        // A dangling symlink is still a symlink: it would be followed on write.
        const link = await lstat(current).catch(() => null);
        if (link?.isSymbolicLink()) {
          throw new WorkspacePathError(`${display} goes through a symlink whose target does not exist; refusing to follow it`);
        }
        break;
      }
      if (code(error) === 'ENOTDIR') break;
      throw error;
    }
    if (!inside(root, real)) {
      throw new WorkspacePathError(`${display} goes through a symlink that leads outside your workspace; refused`);
    }
  }
  return { absolute, display, root };
}

/**
 * Writes a file inside the workspace, creating parent directories. The final component is opened
 * with O_NOFOLLOW, so a symlink swapped in after the path was checked is not written through.
 */
export async function writeWorkspaceFile(target: WorkspacePath, content: string): Promise<void> {
  const existing = await lstat(target.absolute).catch((error: unknown) => {
    if (code(error) === 'ENOENT') return null;
    throw error;
  });
  if (existing?.isSymbolicLink()) throw new WorkspacePathError(`${target.display} is a symlink; refusing to write through it`);
  if (existing?.isDirectory()) throw new WorkspacePathError(`${target.display} is a directory`);
  const parent = resolve(target.absolute, '..');
  await mkdir(parent, { recursive: true });
  // mkdir may have created directories; make sure nothing raced a symlink into the parent chain.
  if (!inside(target.root, await realpath(parent))) {
    throw new WorkspacePathError(`${target.display} goes through a symlink that leads outside your workspace; refused`);
  }
  let handle;
  try {
    handle = await open(target.absolute, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    if (code(error) === 'ELOOP') throw new WorkspacePathError(`${target.display} is a symlink; refusing to write through it`);
    throw error;
  }
  try {
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}
