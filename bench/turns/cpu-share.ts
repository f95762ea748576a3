import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroupWritable } from './cgroup-probe.ts';

/**
 * Holds processes to a fixed CPU share, as if each ran on its own small machine: a cgroup per
 * process with a CFS quota. Cgroup v1's cpu controller where it is mounted (this machine), else
 * cgroup v2's cpu.max; `method` says which, or 'none' when neither can be written (the scale bench
 * then reports the run as unheld rather than pretending).
 */
export type CpuShareMethod = 'cgroup v1 cpu.cfs_quota_us' | 'cgroup v2 cpu.max' | 'none';

const V1 = '/sys/fs/cgroup/cpu';
const V2_CANDIDATES = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'];
const PERIOD_US = 100_000;

export class CpuShares {
  readonly #groups: string[] = [];
  readonly #held = new Set<number>();

  readonly method: CpuShareMethod;
  readonly root: string;
  readonly cores: number;

  private constructor(method: CpuShareMethod, root: string, cores: number) {
    this.method = method;
    this.root = root;
    this.cores = cores;
  }

  /** `cores` is each process's share, 0.25 = a quarter of one core. */
  static async open(cores: number): Promise<CpuShares> {
    if (await cgroupWritable(V1, 'cpu.cfs_quota_us')) return new CpuShares('cgroup v1 cpu.cfs_quota_us', V1, cores);
    for (const dir of V2_CANDIDATES) if (await cgroupWritable(dir, 'cpu.max')) return new CpuShares('cgroup v2 cpu.max', dir, cores);
    return new CpuShares('none', '', cores);
  }

  /** Moves `pid` (and the children it starts later) into a group of its own with the share; once per pid. */
  async hold(pid: number): Promise<void> {
    if (this.method === 'none' || this.#held.has(pid)) return;
    this.#held.add(pid);
    const group = join(this.root, `herald-bench-${process.pid}-${this.#groups.length}`);
    await mkdir(group);
    this.#groups.push(group);
    const quota = Math.round(this.cores * PERIOD_US);
    if (this.method === 'cgroup v1 cpu.cfs_quota_us') {
      await writeFile(join(group, 'cpu.cfs_period_us'), String(PERIOD_US));
      await writeFile(join(group, 'cpu.cfs_quota_us'), String(quota));
    } else {
      await writeFile(join(group, 'cpu.max'), `${quota} ${PERIOD_US}`);
    }
    await writeFile(join(group, 'cgroup.procs'), String(pid));
  }

  /** Times a held group waited for its quota, summed: evidence the share was what bounded it. */
  async throttledCount(): Promise<number> {
    let sum = 0;
    for (const group of this.#groups) {
      const stat = await readFile(join(group, 'cpu.stat'), 'utf8').catch(() => '');
      sum += Number(/nr_throttled (\d+)/.exec(stat)?.[1] ?? 0);
    }
    return sum;
  }

  /** Moves what is left back to the root group and removes the groups. */
  async close(): Promise<void> {
    for (const group of this.#groups.splice(0)) {
      const procs = (await readFile(join(group, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      for (const pid of procs) await writeFile(join(this.root, 'cgroup.procs'), pid).catch(() => undefined);
      await rmdir(group).catch(() => undefined);
    }
  }
}
