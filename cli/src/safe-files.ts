import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

// Files read from a directory someone else laid out (a Hermes home, a skills folder to import):
// a symlink could point at the host's ~/.ssh, a hard link could be the host's id_rsa under a
// harmless name, a FIFO or device would hang or stream forever, and a 30 MB file would be read
// whole before anything looked at it. So every file is opened without following links, checked
// on the open descriptor (no swap between check and read), and refused by size before reading.

/** Why a path inside an imported tree was not read. */
export class UnsafeFileError extends Error {
  override readonly name = 'UnsafeFileError';
  readonly path: string;
  constructor(path: string, why: string) {
    super(`${path}: ${why}`);
    this.path = path;
  }
}

/**
 * Reads a regular file that is not a link, has one name and is at most `maxBytes`; undefined when
 * it does not exist. Throws UnsafeFileError naming the path and the reason otherwise.
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new UnsafeFileError(path, 'is a symbolic link; links are not followed');
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UnsafeFileError(path, 'is not a regular file (a device, pipe or socket); not read');
    if (info.nlink > 1) throw new UnsafeFileError(path, `is a hard link (${info.nlink} names); not read`);
    if (info.size > maxBytes) throw new UnsafeFileError(path, `is ${info.size} bytes; the limit is ${maxBytes}`);
    const content = await handle.readFile();
    // It grew between the check and the read: refuse rather than keep a part.
    if (content.length > maxBytes) throw new UnsafeFileError(path, `is over ${maxBytes} bytes`);
    return content;
  } finally {
    await handle.close();
  }
}
