import { readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { cgroupWritable } from './turns/cgroup-probe.ts';

/**
 * Runs a role with the memory its pod has: a memory cgroup with the limit of the role's manifest in
 * deploy/k8s/base. Node sizes V8's heap from the memory it may use (libuv reads the cgroup), so a
 * role started bare on a large machine gets a heap limit of gigabytes and a lazy collector, and
 * its RSS climbs for tens of minutes before it settles: a soak of that measures the machine, not
 * what operators run. Cgroup v1's memory controller where it is mounted (this machine), else v2's
 * memory.max; `method` says which, or 'none' when neither can be written.
 */
export type PodMemoryMethod = 'cgroup v1 memory.limit_in_bytes' | 'cgroup v2 memory.max' | 'none';

const V1 = '/sys/fs/cgroup/memory';
const V2_CANDIDATES = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'];
const MANIFESTS = new URL('../deploy/k8s/base/', import.meta.url);
const UNITS: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9, '': 1 };

/** The memory limit of `role`'s container in its base manifest, in bytes. */
export function manifestMemoryLimit(role: string): number {
  const text = readFileSync(new URL(`${role}.yaml`, MANIFESTS), 'utf8');
  const deployment = parseAllDocuments(text)
    .map((document) => document.toJS() as { kind?: string; spec?: any })
    .find((document) => document.kind === 'Deployment');
  const limit: unknown = deployment?.spec?.template?.spec?.containers?.[0]?.resources?.limits?.memory;
  const match = typeof limit === 'string' ? /^(\d+)(Ki|Mi|Gi|K|M|G|)$/.exec(limit) : null;
  if (!match) throw new Error(`deploy/k8s/base/${role}.yaml: no memory limit on its container`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

export class PodMemory {
  readonly #groups: string[] = [];

  readonly method: PodMemoryMethod;
  readonly root: string;

  private constructor(method: PodMemoryMethod, root: string) {
    this.method = method;
    this.root = root;
  }

  static async open(): Promise<PodMemory> {
    if (await cgroupWritable(V1, 'memory.limit_in_bytes')) return new PodMemory('cgroup v1 memory.limit_in_bytes', V1);
    for (const dir of V2_CANDIDATES) if (await cgroupWritable(dir, 'memory.max')) return new PodMemory('cgroup v2 memory.max', dir);
    return new PodMemory('none', '');
  }

  /**
   * A group limited to `bytes`, and the command prefix that starts a process inside it: the shell
   * joins the group and then execs, so the process is held from its first instruction (Node reads
   * its memory at start; a process moved in later keeps the heap it sized for the whole machine).
   */
  async launcher(bytes: number): Promise<string[]> {
    if (this.method === 'none') return [];
    const group = join(this.root, `herald-soak-${process.pid}-${this.#groups.length}`);
    await mkdir(group);
    this.#groups.push(group);
    await writeFile(join(group, this.method === 'cgroup v1 memory.limit_in_bytes' ? 'memory.limit_in_bytes' : 'memory.max'), String(bytes));
    return ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', join(group, 'cgroup.procs')];
  }

  /** Removes the groups once their processes have exited (a group with members cannot be removed). */
  async close(): Promise<void> {
    for (const group of this.#groups.splice(0)) {
      const members = (await readFile(join(group, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      if (members.length === 0) await rmdir(group).catch(() => undefined);
    }
  }
}
