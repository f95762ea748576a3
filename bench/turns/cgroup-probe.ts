import { existsSync } from 'node:fs';
import { mkdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Whether this process may make groups under the cgroup hierarchy `dir` whose controller offers
 * `probe` (a file a new group gets, such as cpu.max or memory.limit_in_bytes): a group is made and
 * removed again. The CPU shares of the scale bench and the soak's pod memory both ask it.
 */
export async function cgroupWritable(dir: string, probe: string): Promise<boolean> {
  const test = join(dir, `herald-probe-${process.pid}`);
  try {
    await mkdir(test);
    const ok = existsSync(join(test, probe));
    await rmdir(test);
    return ok;
  } catch {
    return false;
  }
}
