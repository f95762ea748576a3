import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Host processes whose command line contains `marker` (zombies excluded: init may be slow to reap). */
export function running(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(marker)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/**
 * Waits up to 15 s for them to be gone: a sandbox's pid namespace is torn down by the kernel after
 * its outer process dies, which on a loaded CI machine has taken more than 5 s.
 */
export async function noneRunning(marker: string): Promise<boolean> {
  for (let i = 0; i < 150 && running(marker).length > 0; i += 1) await sleep(100);
  return running(marker).length === 0;
}
