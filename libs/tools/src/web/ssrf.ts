import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP, isIPv4 } from 'node:net';

/** Raised when a fetch would reach an address the web tool may not touch. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address. */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const bytes = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const middle = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16));
}

/** An IPv4 address carried inside an IPv6 one (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedIPv4(address: string): string | null {
  const groups = ipv6Groups(address);
  if (groups.length !== 8 || groups.some((group) => Number.isNaN(group))) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return v4(groups[6]!, groups[7]!); // ::ffff:a.b.c.d, ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6]!, groups[7]!); // 64:ff9b::/96
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!); // 6to4
  return null;
}

/** Why an address is off limits (loopback, private...), or null when it is a public address. */
export function blockedReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  if (family === 4) return blocked.check(address, 'ipv4') ? `${address} is a loopback, private, link-local or reserved address` : null;
  if (blocked.check(address, 'ipv6')) return `${address} is a loopback, private, link-local or reserved address`;
  const inner = embeddedIPv4(address);
  return inner !== null && blockedReason(inner) !== null ? `${address} carries the blocked IPv4 address ${inner}` : null;
}

/** The configured exceptions: host names, IP addresses and CIDR ranges the web tool may reach. */
export class Allowlist {
  readonly #hosts = new Set<string>();
  readonly #addresses = new BlockList();

  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const entry = raw
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, '');
      if (entry === '') continue;
      const [network, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(network);
      if (family === 0) {
        if (prefix !== undefined) throw new Error(`web allowlist entry ${raw} is not a valid CIDR range`);
        this.#hosts.add(entry.replace(/\.$/, ''));
      } else if (prefix === undefined) {
        this.#addresses.addAddress(network, family === 4 ? 'ipv4' : 'ipv6');
      } else {
        const bits = Number(prefix);
        if (!Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128)) throw new Error(`web allowlist entry ${raw} has a bad prefix length`);
        this.#addresses.addSubnet(network, bits, family === 4 ? 'ipv4' : 'ipv6');
      }
    }
  }

  allowsHost(hostname: string): boolean {
    return this.#hosts.has(hostname.toLowerCase().replace(/\.$/, ''));
  }

  allowsAddress(address: string): boolean {
    const family = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (this.#addresses.check(address, family)) return true;
    const inner = family === 'ipv6' ? embeddedIPv4(address) : null;
    return inner !== null && this.#addresses.check(inner, 'ipv4');
  }
}

/** Throws unless the web tool may connect to `address` for a URL naming `hostname`. */
export function assertAddressAllowed(hostname: string, address: string, allowlist: Allowlist): void {
  if (allowlist.allowsHost(hostname) || allowlist.allowsAddress(address)) return;
  const reason = blockedReason(address);
  if (reason !== null) throw new BlockedAddressError(`refused to fetch ${hostname}: ${reason}`);
}

/** Resolves a name to all its addresses; injectable so tests control what a name resolves to. */
export type LookupFunction = (hostname: string) => Promise<LookupAddress[]>;

export const systemLookup: LookupFunction = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a host once and checks every address it has. A failed lookup is a refusal, and so is a
 * name with any blocked address among its answers (a public address next to 127.0.0.1 is a
 * rebinding attempt, not a choice). Returns the addresses the caller must connect to.
 */
export async function resolveAllowed(hostname: string, allowlist: Allowlist, lookup: LookupFunction = systemLookup): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(hostname);
  } catch (error) {
    throw new BlockedAddressError(`refused to connect to ${hostname}: its name could not be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (addresses.length === 0) throw new BlockedAddressError(`refused to connect to ${hostname}: its name resolved to no address`);
  for (const entry of addresses) assertAddressAllowed(hostname, entry.address, allowlist);
  return addresses;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that hands the socket exactly the addresses it checked: the name is
 * resolved once per connection, the check and the connect see the same answer, so a name that
 * resolves to a public address for the check and to 127.0.0.1 for the connect (DNS rebinding)
 * cannot slip through.
 */
export function pinnedLookup(allowlist: Allowlist, lookup: LookupFunction = systemLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveAllowed(hostname, allowlist, lookup).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses;
        const usable = wanted.length > 0 ? wanted : addresses;
        if (options.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, []),
    );
  };
}
