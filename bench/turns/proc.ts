import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of utime/stime in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

interface ProcStat {
  ppid: number;
  cpuMs: number;
}

/** utime + stime of one process, from /proc/<pid>/stat; undefined once it is gone. */
async function procStat(pid: number): Promise<ProcStat | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses: fields count from its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(fields[1]);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { ppid, cpuMs: (ticks * 1000) / TICKS_PER_S };
}

/** CPU ms of each pid plus its live descendants (a role that forks helpers pays for them). */
export async function treeCpuMs(pids: number[]): Promise<Map<number, number>> {
  const all = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const stats = new Map<number, ProcStat>();
  await Promise.all(
    all.map(async (pid) => {
      const stat = await procStat(pid);
      if (stat) stats.set(pid, stat);
    }),
  );
  const children = new Map<number, number[]>();
  for (const [pid, stat] of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  const sum = (pid: number): number => (stats.get(pid)?.cpuMs ?? 0) + (children.get(pid) ?? []).reduce((acc, child) => acc + sum(child), 0);
  return new Map(pids.map((pid) => [pid, sum(pid)]));
}

/** CPU ms of each pid alone (Postgres backends: the postmaster's other children are not ours). */
export async function cpuMs(pids: number[]): Promise<Map<number, number>> {
  const entries = await Promise.all(pids.map(async (pid) => [pid, (await procStat(pid))?.cpuMs ?? 0] as const));
  return new Map(entries);
}

/** Resident set size in MB, from /proc/<pid>/status (0 once the process is gone). */
export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
