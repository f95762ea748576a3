import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/**
 * A network namespace joined to the host by a veth pair: the fault tests run a Herald process in
 * it (`ip netns exec`) and cut it off by taking the host's end of the link down. Needs root and
 * iproute2 (.ci/run installs it).
 */
export interface Netns {
  name: string;
  /** The host's address on the link: what the process inside connects to. */
  hostAddress: string;
  /** The CIDR of the link (for pg_hba). */
  network: string;
  /** The command prefix that runs a program inside. */
  exec: string[];
  partition(): void;
  heal(): void;
  remove(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

export function createNetns(): Netns {
  const id = randomBytes(3).toString('hex');
  const name = `hf${id}`;
  const hostEnd = `hv${id}a`;
  const innerEnd = `hv${id}b`;
  // A /30 per namespace from 10.213.0.0/16, picked at random: tests on one machine rarely collide.
  const block = Math.floor(Math.random() * 16_000) * 4;
  const base = `10.213.${Math.floor(block / 256)}.`;
  const hostAddress = `${base}${(block % 256) + 1}`;
  const innerAddress = `${base}${(block % 256) + 2}`;
  ip('netns', 'add', name);
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', innerEnd);
  ip('link', 'set', innerEnd, 'netns', name);
  ip('addr', 'add', `${hostAddress}/30`, 'dev', hostEnd);
  ip('link', 'set', hostEnd, 'up');
  ip('-n', name, 'addr', 'add', `${innerAddress}/30`, 'dev', innerEnd);
  ip('-n', name, 'link', 'set', innerEnd, 'up');
  ip('-n', name, 'link', 'set', 'lo', 'up');
  return {
    name,
    hostAddress,
    network: `${base}${block % 256}/30`,
    exec: ['ip', 'netns', 'exec', name],
    partition: () => ip('link', 'set', hostEnd, 'down'),
    heal: () => ip('link', 'set', hostEnd, 'up'),
    remove() {
      try {
        ip('link', 'del', hostEnd);
      } catch {
        // gone with the namespace already
      }
      ip('netns', 'del', name);
    },
  };
}
