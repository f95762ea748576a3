import { lstatSync, readlinkSync } from 'node:fs';
import { dirname } from 'node:path';

/** Top-level system directories shown read-only; on merged-/usr systems most are symlinks into /usr. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What of /etc a command needs to resolve names, verify TLS and find its libraries. Not /etc as a
 * whole: a container's /etc may hold shadow files, keys or mounted config a command has no business
 * reading.
 */
const ETC_FILES = [
  'passwd',
  'group',
  'hosts',
  'resolv.conf',
  'nsswitch.conf',
  'host.conf',
  'gai.conf',
  'localtime',
  'timezone',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  'alternatives',
  'mime.types',
  'protocols',
  'services',
  'os-release',
  'debian_version',
  'inputrc',
  'bash.bashrc',
  'profile',
];

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** A read-only view of `path`: the same symlink where it is one (merged /usr), a bind otherwise. */
function readOnly(path: string): string[] {
  const info = lstatOrNull(path);
  if (info === null) return [];
  if (info.isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
  return ['--ro-bind', path, path];
}

export interface BwrapLayout {
  /** Host paths shown read-only besides the system directories (toolchains, say). */
  readOnlyPaths: readonly string[];
  /** The running Node's install prefix, shown when it lies outside /usr so npm and node work. */
  nodePrefix: string;
  /** Size of the private /tmp. */
  tmpBytes: number;
  uid: number;
  gid: number;
  /**
   * Mount a /proc of the sandbox's own PID namespace. False where the container's /proc is masked
   * (Kubernetes, Docker) and the kernel refuses a new one: then the sandbox has no /proc at all,
   * which hides the worker just as well but leaves `ps` and friends without their data.
   */
  proc: boolean;
}

/** The mounts and namespaces every sandboxed command gets; computed once per worker. */
export function baseBwrapArgs(layout: BwrapLayout): string[] {
  const extra = [...layout.readOnlyPaths];
  if (!layout.nodePrefix.startsWith('/usr/')) extra.push(layout.nodePrefix);
  return [
    // New user, mount, PID, IPC, UTS, cgroup and network namespaces; the network is shared back per call.
    '--unshare-all',
    '--die-with-parent',
    // A new session: no controlling terminal to push keystrokes into (TIOCSTI).
    '--new-session',
    '--cap-drop',
    'ALL',
    '--uid',
    String(layout.uid),
    '--gid',
    String(layout.gid),
    ...SYSTEM_DIRS.flatMap(readOnly),
    ...ETC_FILES.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]),
    ...extra.flatMap((path) => ['--ro-bind-try', path, path]),
    // A /proc of the sandbox's own PID namespace: the worker's processes (and their environ) are not in it.
    ...(layout.proc ? ['--proc', '/proc'] : []),
    '--dev',
    '/dev',
    '--size',
    String(layout.tmpBytes),
    '--tmpfs',
    '/tmp',
  ];
}

/**
 * The per-call part: the session's own workspace, at its real path so paths match the file tools.
 * bubblewrap binds it nosuid and nodev (as every bind it makes): a setuid file there does nothing
 * inside. The caller adds its own options, then `--` and the command.
 */
export function callBwrapArgs(base: readonly string[], workspace: string, network: boolean, readOnlyPaths: readonly string[] = []): string[] {
  return [
    ...base,
    ...(network ? ['--share-net'] : []),
    ...readOnlyPaths.flatMap((path) => ['--ro-bind', path, path]),
    '--bind',
    workspace,
    workspace,
    // Everything else in the sandbox's root stays as set up: read-only.
    '--remount-ro',
    '/',
    '--chdir',
    workspace,
  ];
}

export function nodePrefixOf(execPath: string): string {
  return dirname(dirname(execPath));
}
