import { chmod, lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

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

/** A workspace is its session's alone: no other account on the host may list, read or run what is in it. */
export const WORKSPACE_MODE = 0o700;

/**
 * Creates the session's workspace on first use (0700; its parents as the umask makes them, so the
 * sandbox's user can pass through them) and returns its real path. A workspace made before with a
 * wider mode is narrowed.
 */
export async function ensureWorkspace(workspaceDir: string): Promise<string> {
  await mkdir(dirname(resolve(workspaceDir)), { recursive: true });
  await mkdir(workspaceDir, { mode: WORKSPACE_MODE }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const root = await realpath(workspaceDir);
  const info = await lstat(root);
  if ((info.mode & 0o7777) !== WORKSPACE_MODE) await chmod(root, WORKSPACE_MODE);
  return root;
}

export function inside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves a path the model gave against the session's workspace, lexically: relative paths resolve
 * inside it; absolute paths are accepted only when they already point inside. Links are judged
 * later, on the opened file (workspace-files.ts), where a swapped link cannot fool the check.
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
      throw new WorkspacePathError(`${requested} is outside your workspace. Use a path relative to the workspace (your working directory).`);
    }
  } else {
    absolute = resolve(root, trimmed);
    if (!inside(root, absolute)) {
      throw new WorkspacePathError(`${requested} leaves your workspace ('..' may not climb above it). Use a path inside the workspace.`);
    }
  }
  return { absolute, display: relative(root, absolute) || '.', root };
}
