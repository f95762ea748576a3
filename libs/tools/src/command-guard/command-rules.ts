import { posix } from 'node:path';

/** A finding's stable short name (what "allow for this session" remembers) and its description. */
export type Rule = readonly [patternKey: string, description: string];

/** Refused whatever anyone approves. */
export const HARD = {
  rmCritical: ['recursive delete of /, home or a system directory', 'deletes the whole system, a system directory or the home directory'],
  mkfs: ['mkfs', 'formats a filesystem'],
  diskWrite: ['write to a disk device', 'overwrites a raw disk device'],
  forkBomb: ['fork bomb', 'is a fork bomb'],
  killAll: ['kill -1', 'kills every process'],
  shutdown: ['shutdown or reboot', 'shuts down or reboots the machine'],
} as const satisfies Record<string, Rule>;

/** Known to be destructive: runs after a person approves. */
export const DANGER = {
  rmRecursive: ['recursive delete', 'deletes a directory tree'],
  rmSystem: ['delete in a system directory', 'deletes files in a system directory'],
  findDelete: ['find -delete', 'deletes the files find matches'],
  xargsRm: ['xargs rm', 'deletes every file fed to it'],
  chmodWorld: ['world-writable chmod', 'makes files writable by everyone (777/666/o+w)'],
  chownRecursive: ['recursive chown', 'changes ownership of a whole tree'],
  sqlDrop: ['SQL DROP', 'drops a database table, schema or database'],
  sqlDelete: ['SQL DELETE without WHERE', 'deletes every row of a table'],
  sqlTruncate: ['SQL TRUNCATE', 'empties a table'],
  downloadToShell: ['download executed by a shell', 'runs code downloaded from the network'],
  decodedToShell: ['decoded content executed by a shell', 'runs content decoded from base64 or hex, hiding what it does'],
  gitResetHard: ['git reset --hard', 'discards uncommitted changes'],
  gitPushForce: ['git push --force', 'rewrites history on the remote'],
  gitClean: ['git clean -f', 'deletes untracked files'],
  gitBranchDelete: ['git branch -D', 'deletes a branch even if unmerged'],
  systemWrite: ['write to a system file', 'writes to a system file'],
  dd: ['dd', 'copies raw data with dd'],
  systemctl: ['systemctl stop/restart', 'stops or restarts a system service'],
  pkill9: ['pkill -9', 'force-kills processes by name'],
  killall: ['killall', 'kills processes by name'],
  shred: ['shred', 'overwrites files so they cannot be recovered'],
  renamedCommand: ['copy of a system command', 'copies or links a system command under another name, hiding what later runs'],
} as const satisfies Record<string, Rule>;

/**
 * What the guard cannot read with certainty. Not known to be destructive, but the words it checks
 * are not the words that will run, so a person decides. Reported only when nothing more specific is.
 */
export const UNCERTAIN = {
  nested: ['deeply nested command', 'nests commands too deeply to check'],
  unparsed: ['unparsable command', 'does not parse as shell'],
  dynamicCommand: ['computed command name', 'runs a command whose name is computed when it runs (a variable, substitution, glob or brace)'],
  eval: ['eval', 'evaluates text as a command'],
  inlineCode: ['inline interpreter code', 'runs code given inline to an interpreter (-c/-e), which the guard cannot read'],
  pipedCode: ['code piped into an interpreter', 'feeds commands to a shell or interpreter on its standard input'],
  heredocCode: ['here-document into an interpreter', 'feeds a here-document or here-string to a shell or interpreter'],
  inlineDefinition: ['inline alias or function', 'defines an alias or a function, so later words may not mean what they say'],
  xargsExec: ['xargs into a command', 'runs a shell, interpreter or destructive command on arguments read from its input'],
  findExec: ['find -exec', 'runs a shell, interpreter or destructive command on every file find matches'],
  embeddedCommand: ['command run by another tool', 'hands a command to another program to run (tar, awk, sed, git, ssh, vim...)'],
  shellNoCode: ['shell -c without a literal command', 'runs a shell on a command the guard cannot see'],
  writtenThenRun: ['runs a file it just wrote', 'writes a file and runs it in the same command, so the guard never sees what runs'],
  shellStartup: ['shell startup variable', 'sets a variable that makes a shell run other code (BASH_ENV, ENV, PROMPT_COMMAND, LD_PRELOAD...)'],
} as const satisfies Record<string, Rule>;

const TOP_SYSTEM_DIRS = new Set([
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/media',
  '/mnt',
  '/opt',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/snap',
  '/srv',
  '/sys',
  '/usr',
  '/var',
]);
const SYSTEM_WRITE_ROOTS = ['/etc', '/usr', '/bin', '/sbin', '/boot', '/lib', '/lib32', '/lib64', '/sys', '/proc', '/dev', '/var', '/root', '/opt', '/srv'];
const HARMLESS_SYSTEM_PATHS = [/^\/dev\/(null|zero|u?random|stdin|stdout|stderr|tty)$/, /^\/dev\/(fd|shm|pts|tcp|udp)\//, /^\/proc\/self\/fd\//, /^\/var\/tmp(\/|$)/];
export const DISK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|disk\/|dm-\d|md\d|mapper\/|loop\d|sr\d)/;
/** Directories whose programs a copy would disguise (`cp /bin/rm ./x; ./x -rf /`). */
export const SYSTEM_BIN = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

/** `/etc/`, `/etc/.`, `//etc`, `/etc/*` are all /etc; `~/`, `$HOME/.` are all ~. */
export function canonicalPath(raw: string): string {
  let path = raw.replace(/^(?:\$\{HOME\}|\$HOME)(?=\/|$)/, '~').replace(/(\/\*)+$/, '/');
  if (path === '~' || path.startsWith('~/')) {
    const rest = posix.normalize(`/${path.slice(1)}`).replace(/\/+$/, '');
    return `~${rest}`;
  }
  if (path.startsWith('/')) {
    path = posix.normalize(path);
    return path.length > 1 ? path.replace(/\/+$/, '') : path;
  }
  return path;
}

export function isCriticalPath(path: string): boolean {
  return path === '/' || path === '~' || TOP_SYSTEM_DIRS.has(path) || /^\/usr\/[^/]+$/.test(path);
}

export function isSystemPath(path: string): boolean {
  if (HARMLESS_SYSTEM_PATHS.some((pattern) => pattern.test(path))) return false;
  return path === '/' || SYSTEM_WRITE_ROOTS.some((root) => path === root || path.startsWith(`${root}/`));
}
