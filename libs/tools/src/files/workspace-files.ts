import { constants, existsSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import { mkdir, open, readdir, readlink, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, relative, sep } from 'node:path';
import { inside, WorkspacePathError } from './workspace-paths.ts';
import type { WorkspacePath } from './workspace-paths.ts';

/*
 * Confinement of the file tools, decided on the opened file descriptor rather than on the path: a
 * path can be re-pointed between a check and the open (a symlink swapped in by a command running
 * in the same workspace), a descriptor cannot. After each open the descriptor's real path must lie
 * inside the workspace, and a regular file must have exactly one name: a hard link is a second name
 * for a file that may live outside the workspace, and nothing on the link itself says so.
 */

const PROC_FD = existsSync('/proc/self/fd');
/** Non-blocking, so a FIFO or device left in the workspace cannot hang a thread of the pool. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;
/** No O_TRUNC: the file is emptied only after the descriptor passed its checks. */
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** Where the descriptor really points: the kernel's own answer on Linux. */
async function realPathOf(handle: FileHandle, path: string, info: Stats): Promise<string | null> {
  if (PROC_FD) return readlink(`/proc/self/fd/${handle.fd}`);
  // Elsewhere: the path's real path, trusted only if it names the very file that was opened.
  const real = await realpath(path).catch(() => null);
  if (real === null) return null;
  const now = await stat(real).catch(() => null);
  return now !== null && now.dev === info.dev && now.ino === info.ino ? real : null;
}

/** Closes the handle and throws unless it is inside the workspace and, for a file, its only name. */
async function checked(handle: FileHandle, target: WorkspacePath, path: string): Promise<{ handle: FileHandle; info: Stats }> {
  try {
    const info = await handle.stat();
    const real = await realPathOf(handle, path, info);
    if (real === null || !inside(target.root, real)) {
      throw new WorkspacePathError(`${target.display} goes through a symlink that leads outside your workspace; refused`);
    }
    if (info.isFile() && info.nlink > 1) {
      throw new WorkspacePathError(`${target.display} has ${info.nlink} hard links: another name for the same file may be outside your workspace; refused. Copy the file instead of linking it.`);
    }
    return { handle, info };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function missing(target: WorkspacePath): WorkspacePathError {
  return new WorkspacePathError(`${target.display} does not exist. Use search_files with target='files' to find it.`);
}

/** Opens a file or directory to read; links may be followed as long as the result is inside. */
export async function openInside(target: WorkspacePath): Promise<{ handle: FileHandle; info: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(target.absolute, READ_FLAGS);
  } catch (error) {
    if (code(error) === 'ENOENT') throw missing(target);
    if (code(error) === 'ELOOP') throw new WorkspacePathError(`${target.display} is a symlink loop; refused`);
    throw error;
  }
  return checked(handle, target, target.absolute);
}

/** Opens a regular file to read, with the messages the model needs for anything else. */
export async function openFileInside(target: WorkspacePath): Promise<{ handle: FileHandle; size: number }> {
  const { handle, info } = await openInside(target);
  if (info.isFile()) return { handle, size: info.size };
  await handle.close();
  if (info.isDirectory()) {
    throw new WorkspacePathError(`${target.display} is a directory. Use search_files with target='files' and path='${target.display}' to list it.`);
  }
  throw new WorkspacePathError(`${target.display} is not a regular file`);
}

/** A path that reaches into an open directory: the lookup starts from the directory itself. */
function under(directory: { handle: FileHandle; path: string }, name: string): string {
  return PROC_FD ? `/proc/self/fd/${directory.handle.fd}/${name}` : `${directory.path}${sep}${name}`;
}

/** Opens (creating as needed) each directory from the workspace down to `path`, each one checked. */
async function openDirectoryChain(target: WorkspacePath, path: string): Promise<{ handle: FileHandle; path: string }> {
  let current = { handle: await open(target.root, DIRECTORY_FLAGS), path: target.root };
  for (const part of relative(target.root, path)
    .split(sep)
    .filter((piece) => piece !== '')) {
    const next = under(current, part);
    let handle: FileHandle;
    try {
      await mkdir(next).catch((error: unknown) => {
        if (code(error) !== 'EEXIST') throw error;
      });
      handle = await open(next, DIRECTORY_FLAGS);
    } catch (error) {
      await current.handle.close();
      if (code(error) === 'ENOENT') throw new WorkspacePathError(`${target.display} goes through a symlink whose target does not exist; refusing to follow it`);
      if (code(error) === 'ENOTDIR') throw new WorkspacePathError(`${target.display}: a part of the path is a file, not a directory`);
      throw error;
    }
    await current.handle.close();
    current = { handle: (await checked(handle, target, `${current.path}${sep}${part}`)).handle, path: `${current.path}${sep}${part}` };
  }
  return current;
}

/** Opens a file to write inside the workspace; the last component is never followed if it is a link. */
async function openForWrite(target: WorkspacePath): Promise<FileHandle> {
  const parent = await openDirectoryChain(target, dirname(target.absolute));
  let handle: FileHandle;
  try {
    handle = await open(under(parent, basename(target.absolute)), WRITE_FLAGS, 0o644);
  } catch (error) {
    if (code(error) === 'ELOOP') throw new WorkspacePathError(`${target.display} is a symlink; refusing to write through it`);
    if (code(error) === 'EISDIR') throw new WorkspacePathError(`${target.display} is a directory`);
    if (code(error) === 'ENXIO') throw new WorkspacePathError(`${target.display} is not a regular file`);
    throw error;
  } finally {
    await parent.handle.close();
  }
  const { info } = await checked(handle, target, target.absolute);
  if (!info.isFile()) {
    await handle.close();
    throw new WorkspacePathError(`${target.display} is not a regular file`);
  }
  return handle;
}

/** Replaces a file's content inside the workspace, creating parent directories. */
export async function writeWorkspaceFile(target: WorkspacePath, content: string | Uint8Array): Promise<void> {
  if (target.absolute === target.root) throw new WorkspacePathError(`${target.display} is a directory`);
  const handle = await openForWrite(target);
  try {
    await handle.truncate(0);
    await (typeof content === 'string' ? handle.writeFile(content, 'utf8') : handle.writeFile(content));
  } finally {
    await handle.close();
  }
}

/** The entries of a directory inside the workspace, listed through its checked descriptor. */
export async function listDirectoryInside(target: WorkspacePath): Promise<Dirent[]> {
  const { handle, info } = await openInside(target);
  try {
    if (!info.isDirectory()) throw new WorkspacePathError(`${target.display} is not a directory`);
    return await readdir(PROC_FD ? `/proc/self/fd/${handle.fd}` : target.absolute, { withFileTypes: true });
  } finally {
    await handle.close();
  }
}
