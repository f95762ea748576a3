import { posix } from 'node:path';
import { lex } from './shell-lexer.ts';
import type { SimpleCommand, Word } from './shell-lexer.ts';

/**
 * The terminal's command guard. `hardline` commands are refused whatever anyone approves;
 * `dangerous` ones run only after a person approves them; `patternKey` is the stable short name
 * that "allow for this session" remembers.
 *
 * Checks run on what the shell would execute, not on the raw text: quotes and escapes are removed
 * (r'm' is rm), `$(echo rm)`-style substitutions are folded, `$HOME`/`${HOME}`/`~` are one home,
 * wrappers (sudo, env, nohup, /bin/...) are peeled off, and every simple command after ; && || | is
 * checked at command position. Text that is only data stays data: `echo "rm -rf /"` is ok, while
 * `bash -c "rm -rf /"`, `eval ...` and `echo ... | sh` are checked as commands. SQL statements are
 * the exception: they are matched anywhere in the text, because they reach a database as strings.
 */
export type GuardVerdict = 'hardline' | 'dangerous' | 'ok';

export interface CommandCheck {
  verdict: GuardVerdict;
  patternKey?: string;
  description?: string;
}

interface Finding {
  verdict: 'hardline' | 'dangerous';
  patternKey: string;
  description: string;
}

const MAX_DEPTH = 4;

const HARD = {
  rmCritical: ['recursive delete of /, home or a system directory', 'deletes the whole system, a system directory or the home directory'],
  mkfs: ['mkfs', 'formats a filesystem'],
  diskWrite: ['write to a disk device', 'overwrites a raw disk device'],
  forkBomb: ['fork bomb', 'is a fork bomb'],
  killAll: ['kill -1', 'kills every process'],
  shutdown: ['shutdown or reboot', 'shuts down or reboots the machine'],
} as const;

const DANGER = {
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
  nested: ['deeply nested command', 'nests commands too deeply to check'],
} as const;

type Rule = readonly [patternKey: string, description: string];

const TOP_SYSTEM_DIRS = new Set([
  '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/media', '/mnt', '/opt',
  '/proc', '/root', '/run', '/sbin', '/snap', '/srv', '/sys', '/usr', '/var',
]);
const SYSTEM_WRITE_ROOTS = ['/etc', '/usr', '/bin', '/sbin', '/boot', '/lib', '/lib32', '/lib64', '/sys', '/proc', '/dev', '/var', '/root', '/opt', '/srv'];
const HARMLESS_SYSTEM_PATHS = [/^\/dev\/(null|zero|u?random|stdin|stdout|stderr|tty)$/, /^\/dev\/(fd|shm|pts)\//, /^\/proc\/self\/fd\//, /^\/var\/tmp(\/|$)/];
const DISK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|disk\/|dm-\d|md\d|mapper\/|loop\d|sr\d)/;

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'fish']);
const INTERPRETER = /^(python[0-9.]*|perl|ruby|node|nodejs|php|lua|deno|bun)$/;
const FETCHERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'lwp-download']);

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

function isCriticalPath(path: string): boolean {
  return path === '/' || path === '~' || TOP_SYSTEM_DIRS.has(path) || /^\/usr\/[^/]+$/.test(path);
}

function isSystemPath(path: string): boolean {
  if (HARMLESS_SYSTEM_PATHS.some((pattern) => pattern.test(path))) return false;
  return path === '/' || SYSTEM_WRITE_ROOTS.some((root) => path === root || path.startsWith(`${root}/`));
}

function basename(word: string): string {
  return word.includes('/') ? word.slice(word.lastIndexOf('/') + 1) : word;
}

const SUDO_ARG_OPTIONS = new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group']);

/**
 * Where the real command starts once assignments, keywords and wrappers (sudo, env, nohup, nice,
 * timeout...) are skipped; -1 when nothing is executed (`command -v rm` only asks).
 */
function commandStart(words: readonly string[]): number {
  let i = 0;
  const skipOptions = (withArgument: ReadonlySet<string> = new Set()) => {
    while (i < words.length && words[i]!.startsWith('-')) {
      const option = words[i]!;
      i += 1;
      if (option === '--') break;
      if (withArgument.has(option)) i += 1;
    }
  };
  for (;;) {
    while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || /^(!|then|do|else|elif|if|while|until|time)$/.test(words[i]!))) i += 1;
    const word = words[i];
    if (word === undefined) return -1;
    switch (basename(word)) {
      case 'sudo':
      case 'doas':
        i += 1;
        skipOptions(SUDO_ARG_OPTIONS);
        break;
      case 'env':
        i += 1;
        while (i < words.length && (words[i]!.startsWith('-') || words[i]!.includes('='))) {
          i += ['-u', '-C', '-S', '--unset', '--chdir'].includes(words[i]!) ? 2 : 1;
        }
        break;
      case 'command':
      case 'builtin':
        i += 1;
        if (words[i] === '-v' || words[i] === '-V') return -1;
        skipOptions();
        break;
      case 'exec':
        i += 1;
        skipOptions(new Set(['-a']));
        break;
      case 'nohup':
      case 'setsid':
      case 'unbuffer':
        i += 1;
        skipOptions();
        break;
      case 'nice':
      case 'ionice':
      case 'stdbuf':
      case 'chrt':
        i += 1;
        skipOptions(new Set(['-n', '-c', '-p', '-i', '-o', '-e']));
        break;
      case 'timeout':
        i += 1;
        skipOptions(new Set(['-s', '-k', '--signal', '--kill-after']));
        i += 1; // the duration
        break;
      default:
        return i;
    }
  }
}

function shortFlags(args: readonly string[]): string {
  return args.filter((arg) => /^-[A-Za-z0-9]+$/.test(arg)).map((arg) => arg.slice(1)).join('');
}

function feedKind(commands: readonly (readonly string[])[]): 'download' | 'decode' | null {
  let kind: 'download' | 'decode' | null = null;
  for (const words of commands) {
    const start = commandStart(words);
    if (start < 0) continue;
    const name = basename(words[start]!);
    const args = words.slice(start + 1);
    if (FETCHERS.has(name)) return 'download';
    const decodes =
      ((name === 'base64' || name === 'base32') && args.some((arg) => arg === '--decode' || /^-[a-zA-Z]*[dD]/.test(arg))) ||
      (name === 'xxd' && args.some((arg) => /^-[a-zA-Z]*r/.test(arg) || arg === '-revert')) ||
      (name === 'openssl' && args.includes('-d')) ||
      name === 'uudecode';
    if (decodes) kind = 'decode';
  }
  return kind;
}

function substitutionFeed(words: readonly Word[]): 'download' | 'decode' | null {
  let kind: 'download' | 'decode' | null = null;
  for (const word of words) {
    for (const source of word.substitutions) {
      const found = feedKind(lex(source).map((command) => command.words.map((w) => w.text)));
      if (found === 'download') return found;
      kind ??= found;
    }
  }
  return kind;
}

class Inspection {
  readonly findings: Finding[] = [];

  add(verdict: Finding['verdict'], [patternKey, description]: Rule): void {
    this.findings.push({ verdict, patternKey, description });
  }

  source(text: string, depth: number): void {
    if (depth > MAX_DEPTH) {
      this.add('dangerous', DANGER.nested);
      return;
    }
    this.raw(text);
    const commands = lex(text);
    commands.forEach((command, index) => this.command(command, commands, index, depth));
  }

  /** Patterns that live in the text itself rather than in a command's words. */
  raw(text: string): void {
    const collapsed = text.replace(/\s+/g, ' ');
    if (/([\w:.-]{1,64})\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&?\s*;?\s*\}/.test(collapsed)) this.add('hardline', HARD.forkBomb);
    if (/\bDROP\s+(TABLE|DATABASE|SCHEMA)\b/i.test(text)) this.add('dangerous', DANGER.sqlDrop);
    for (const match of text.matchAll(/\bDELETE\s+FROM\b([^;]*)/gi)) {
      if (!/\bWHERE\b/i.test(match[1]!)) this.add('dangerous', DANGER.sqlDelete);
    }
    if (/\bTRUNCATE\s+(TABLE\s+)?[A-Za-z_"`]/i.test(text)) this.add('dangerous', DANGER.sqlTruncate);
  }

  command(command: SimpleCommand, pipeline: readonly SimpleCommand[], index: number, depth: number): void {
    for (const word of command.words) for (const source of word.substitutions) this.source(source, depth + 1);
    for (const redirect of command.redirects) {
      if (!/>/.test(redirect.operator)) continue;
      this.writeTarget(redirect.target);
    }
    const texts = command.words.map((word) => word.text);
    const start = commandStart(texts);
    if (start < 0) return;
    const name = basename(texts[start]!);
    const args = texts.slice(start + 1);
    const argWords = command.words.slice(start + 1);
    const flags = shortFlags(args);

    switch (/^mkfs\./.test(name) ? 'mkfs' : name) {
      case 'rm':
        return this.rm(args);
      case 'mkfs':
      case 'mke2fs':
        return this.add('hardline', HARD.mkfs);
      case 'dd': {
        const output = args.find((arg) => arg.startsWith('of='));
        if (output && DISK_DEVICE.test(canonicalPath(output.slice(3)))) return this.add('hardline', HARD.diskWrite);
        if (output) this.writeTarget(output.slice(3));
        if (args.some((arg) => arg.startsWith('if='))) this.add('dangerous', DANGER.dd);
        return;
      }
      case 'tee':
        for (const arg of args) if (!arg.startsWith('-')) this.writeTarget(arg);
        return;
      case 'cp':
      case 'mv':
      case 'install':
      case 'ln':
      case 'rsync': {
        const operands = args.filter((arg) => !arg.startsWith('-'));
        const destination = operands[operands.length - 1];
        if (operands.length >= 2 && destination !== undefined) this.writeTarget(destination);
        return;
      }
      case 'sed':
        if (args.some((arg) => /^-[a-zA-Z]*i/.test(arg) || arg.startsWith('--in-place'))) {
          for (const arg of args) if (!arg.startsWith('-')) this.writeTarget(arg);
        }
        return;
      case 'kill':
        return this.kill(args);
      case 'shutdown':
      case 'reboot':
      case 'halt':
      case 'poweroff':
        return this.add('hardline', HARD.shutdown);
      case 'init':
      case 'telinit':
        if (args.some((arg) => arg === '0' || arg === '6')) this.add('hardline', HARD.shutdown);
        return;
      case 'systemctl':
      case 'service': {
        const operands = args.filter((arg) => !arg.startsWith('-'));
        if (name === 'systemctl' && operands.some((arg) => /^(poweroff|reboot|halt|kexec)$/.test(arg))) return this.add('hardline', HARD.shutdown);
        if (operands.some((arg) => /^(stop|restart|disable|mask|kill)$/.test(arg))) this.add('dangerous', DANGER.systemctl);
        return;
      }
      case 'find':
        if (args.includes('-delete')) return this.add('dangerous', DANGER.findDelete);
        args.forEach((arg, at) => {
          if (/^-(exec|execdir|ok|okdir)$/.test(arg) && basename(args[at + 1] ?? '') === 'rm') this.add('dangerous', DANGER.findDelete);
        });
        return;
      case 'xargs':
        if (args.some((arg) => basename(arg) === 'rm')) this.add('dangerous', DANGER.xargsRm);
        return;
      case 'chmod':
        if (args.some((arg) => arg.length <= 64 && (/^[0-7]?[0-7]{2}[2367]$/.test(arg) || /(^|,)[ugo]*[ao][ugoa]*[+=][rwxXst]*w/.test(arg)))) {
          this.add('dangerous', DANGER.chmodWorld);
        }
        return;
      case 'chown':
        if (flags.includes('R') || args.includes('--recursive')) this.add('dangerous', DANGER.chownRecursive);
        return;
      case 'git':
        return this.git(args);
      case 'pkill':
        if (args.some((arg, at) => /^-(9|KILL|SIGKILL)$/i.test(arg) || /^--signal=(9|KILL|SIGKILL)$/i.test(arg) || ((arg === '-s' || arg === '--signal') && /^(9|KILL|SIGKILL)$/i.test(args[at + 1] ?? '')))) {
          this.add('dangerous', DANGER.pkill9);
        }
        return;
      case 'killall':
        return this.add('dangerous', DANGER.killall);
      default:
        break;
    }

    // Code run by a shell or interpreter: check what it runs and where that code comes from.
    const shell = SHELLS.has(name);
    const executes = shell || INTERPRETER.test(name) || name === 'eval' || name === 'source' || name === '.';
    if (!executes) return;
    if (shell) {
      const flagAt = args.findIndex((arg) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg));
      if (flagAt >= 0 && args[flagAt + 1] !== undefined) this.source(args[flagAt + 1]!, depth + 1);
    }
    if (name === 'eval') this.source(args.join(' '), depth + 1);
    this.feed(substitutionFeed(argWords));
    const readsPipe = command.joinedBy === '|' || command.joinedBy === '|&';
    const runsScriptFile = args.some((arg) => !arg.startsWith('-'));
    if (readsPipe && (name !== 'eval' && name !== 'source' && name !== '.') && (!runsScriptFile || args.includes('-s'))) {
      const upstream: string[][] = [];
      for (let at = index; at > 0 && (pipeline[at]!.joinedBy === '|' || pipeline[at]!.joinedBy === '|&'); at -= 1) {
        upstream.push(pipeline[at - 1]!.words.map((word) => word.text));
      }
      this.feed(feedKind(upstream));
      for (const words of upstream) {
        const from = commandStart(words);
        if (from >= 0 && /^(echo|printf)$/.test(basename(words[from]!)) && shell) this.source(words.slice(from + 1).join(' '), depth + 1);
      }
    }
  }

  feed(kind: 'download' | 'decode' | null): void {
    if (kind === 'download') this.add('dangerous', DANGER.downloadToShell);
    if (kind === 'decode') this.add('dangerous', DANGER.decodedToShell);
  }

  writeTarget(raw: string): void {
    const path = canonicalPath(raw);
    if (DISK_DEVICE.test(path)) this.add('hardline', HARD.diskWrite);
    else if (isSystemPath(path)) this.add('dangerous', DANGER.systemWrite);
  }

  rm(args: readonly string[]): void {
    let recursive = false;
    let options = true;
    const targets: string[] = [];
    for (const arg of args) {
      if (options && arg === '--') options = false;
      else if (options && arg.startsWith('--')) recursive ||= arg === '--recursive';
      else if (options && /^-[A-Za-z]+$/.test(arg)) recursive ||= /[rR]/.test(arg);
      else targets.push(canonicalPath(arg));
    }
    if (recursive && targets.some(isCriticalPath)) this.add('hardline', HARD.rmCritical);
    else if (recursive) this.add('dangerous', DANGER.rmRecursive);
    else if (targets.some(isSystemPath)) this.add('dangerous', DANGER.rmSystem);
  }

  kill(args: readonly string[]): void {
    const targets: string[] = [];
    let at = 0;
    const first = args[0];
    if (first === '-s' || first === '-n') at = 2;
    else if (first !== undefined && first.startsWith('-') && first !== '--') at = 1;
    for (; at < args.length; at += 1) if (args[at] !== '--') targets.push(args[at]!);
    // `kill -9 -1` signals every process; a bare `kill -1` is refused too, as Hermes does.
    if (targets.includes('-1') || (args.length === 1 && first === '-1')) this.add('hardline', HARD.killAll);
  }

  git(all: readonly string[]): void {
    let at = 0;
    while (at < all.length && all[at]!.startsWith('-')) {
      at += ['-C', '-c', '--git-dir', '--work-tree', '--namespace'].includes(all[at]!) ? 2 : 1;
    }
    const sub = all[at];
    const args = all.slice(at + 1);
    const flags = shortFlags(args);
    if (sub === 'reset' && args.includes('--hard')) this.add('dangerous', DANGER.gitResetHard);
    if (
      sub === 'push' &&
      (flags.includes('f') || args.some((arg) => arg === '--force' || arg.startsWith('--force-with-lease') || (!arg.startsWith('-') && arg.startsWith('+'))))
    ) {
      this.add('dangerous', DANGER.gitPushForce);
    }
    if (sub === 'clean' && (flags.includes('f') || args.includes('--force'))) this.add('dangerous', DANGER.gitClean);
    if (sub === 'branch' && (flags.includes('D') || ((flags.includes('d') || args.includes('--delete')) && (flags.includes('f') || args.includes('--force'))))) {
      this.add('dangerous', DANGER.gitBranchDelete);
    }
  }
}

export function checkCommand(command: string): CommandCheck {
  const inspection = new Inspection();
  inspection.source(command, 0);
  const finding = inspection.findings.find((found) => found.verdict === 'hardline') ?? inspection.findings[0];
  if (!finding) return { verdict: 'ok' };
  return { verdict: finding.verdict, patternKey: finding.patternKey, description: finding.description };
}
