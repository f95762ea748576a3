import { canonicalPath, DANGER, DISK_DEVICE, HARD, isCriticalPath, isSystemPath, SYSTEM_BIN, UNCERTAIN } from './command-rules.ts';
import type { Rule } from './command-rules.ts';
import { basename, shortFlags } from './command-words.ts';

/** What a per-command check may report, and the nested checks it may ask for. */
export interface Inspector {
  hardline(rule: Rule): void;
  dangerous(rule: Rule): void;
  uncertain(rule: Rule): void;
  /** Checks text the command will run as a shell command line (`trap '...' EXIT`). */
  source(text: string): void;
  /** Checks a command given as words whose last operands come from elsewhere (find -exec, xargs). */
  runsOn(words: readonly string[], via: 'find' | 'xargs'): void;
  writeTarget(path: string): void;
}

type Check = (args: readonly string[], inspector: Inspector) => void;

function operands(args: readonly string[]): string[] {
  return args.filter((arg) => !arg.startsWith('-'));
}

function rm(args: readonly string[], inspector: Inspector): void {
  let recursive = false;
  let options = true;
  const targets: string[] = [];
  for (const arg of args) {
    if (options && arg === '--') options = false;
    else if (options && arg.startsWith('--')) recursive ||= arg === '--recursive';
    else if (options && /^-[A-Za-z]+$/.test(arg)) recursive ||= /[rR]/.test(arg);
    else targets.push(canonicalPath(arg));
  }
  if (recursive && targets.some(isCriticalPath)) inspector.hardline(HARD.rmCritical);
  else if (recursive) inspector.dangerous(DANGER.rmRecursive);
  else if (targets.some(isSystemPath)) inspector.dangerous(DANGER.rmSystem);
}

function dd(args: readonly string[], inspector: Inspector): void {
  const output = args.find((arg) => arg.startsWith('of='));
  if (output && DISK_DEVICE.test(canonicalPath(output.slice(3)))) return inspector.hardline(HARD.diskWrite);
  if (output) inspector.writeTarget(output.slice(3));
  if (args.some((arg) => arg.startsWith('if='))) inspector.dangerous(DANGER.dd);
}

/** The destination is written; a system program copied under another name disguises what runs later. */
function copy(args: readonly string[], inspector: Inspector): void {
  const paths = operands(args);
  const destination = paths[paths.length - 1];
  if (paths.length < 2 || destination === undefined) return;
  inspector.writeTarget(destination);
  const renamed = paths.slice(0, -1).some((source) => SYSTEM_BIN.test(canonicalPath(source)) && basename(destination) !== basename(source));
  if (renamed && !destination.endsWith('/') && destination !== '.') inspector.dangerous(DANGER.renamedCommand);
}

function kill(args: readonly string[], inspector: Inspector): void {
  const first = args[0];
  let at = 0;
  if (first === '-s' || first === '-n') at = 2;
  else if (first !== undefined && first.startsWith('-') && first !== '--') at = 1;
  const targets = args.slice(at).filter((arg) => arg !== '--');
  // `kill -9 -1` signals every process; a bare `kill -1` is refused too, as Hermes does.
  if (targets.includes('-1') || (args.length === 1 && first === '-1')) inspector.hardline(HARD.killAll);
}

function systemctl(name: string): Check {
  return (args, inspector) => {
    const words = operands(args);
    if (name === 'systemctl' && words.some((arg) => /^(poweroff|reboot|halt|kexec)$/.test(arg))) return inspector.hardline(HARD.shutdown);
    if (words.some((arg) => /^(stop|restart|disable|mask|kill)$/.test(arg))) inspector.dangerous(DANGER.systemctl);
  };
}

function find(args: readonly string[], inspector: Inspector): void {
  if (args.includes('-delete')) inspector.dangerous(DANGER.findDelete);
  args.forEach((arg, at) => {
    if (/^-(fprint|fprint0|fprintf|fls)$/.test(arg) && args[at + 1] !== undefined) inspector.writeTarget(args[at + 1]!);
    if (!/^-(exec|execdir|ok|okdir)$/.test(arg)) return;
    const end = args.findIndex((word, index) => index > at && (word === ';' || word === '+'));
    inspector.runsOn(args.slice(at + 1, end === -1 ? args.length : end), 'find');
  });
}

const XARGS_VALUED = new Set([
  '-I',
  '-L',
  '-l',
  '-n',
  '-P',
  '-s',
  '-d',
  '-E',
  '-e',
  '-a',
  '--max-args',
  '--max-procs',
  '--delimiter',
  '--arg-file',
  '--replace',
  '--max-lines',
  '--eof',
  '--max-chars',
]);

function xargs(args: readonly string[], inspector: Inspector): void {
  let at = 0;
  while (at < args.length && args[at]!.startsWith('-')) at += XARGS_VALUED.has(args[at]!) ? 2 : 1;
  if (at < args.length) inspector.runsOn(args.slice(at), 'xargs');
}

function parallel(args: readonly string[], inspector: Inspector): void {
  const end = args.findIndex((arg) => /^:::+$/.test(arg));
  const words = args.slice(0, end === -1 ? args.length : end).filter((arg) => !arg.startsWith('-'));
  if (words.length > 0) inspector.runsOn(words, 'xargs');
}

function chmod(args: readonly string[], inspector: Inspector): void {
  const worldWritable = (arg: string) => arg.length <= 64 && (/^[0-7]?[0-7]{2}[2367]$/.test(arg) || /(^|,)[ugo]*[ao][ugoa]*[+=][rwxXst]*w/.test(arg));
  if (args.some(worldWritable)) inspector.dangerous(DANGER.chmodWorld);
}

function git(all: readonly string[], inspector: Inspector): void {
  let at = 0;
  for (; at < all.length && all[at]!.startsWith('-'); at += 1) {
    if (all[at] === '-c' && GIT_RUNS_COMMAND.test(all[at + 1] ?? '')) inspector.uncertain(UNCERTAIN.embeddedCommand);
    if (['-C', '-c', '--git-dir', '--work-tree', '--namespace'].includes(all[at]!)) at += 1;
  }
  const sub = all[at];
  const args = all.slice(at + 1);
  const flags = shortFlags(args);
  const has = (...names: string[]) => names.some((name) => args.includes(name));
  if (sub === 'reset' && has('--hard')) inspector.dangerous(DANGER.gitResetHard);
  if (sub === 'push' && (flags.includes('f') || has('--force') || args.some((arg) => arg.startsWith('--force-with-lease') || /^\+/.test(arg)))) {
    inspector.dangerous(DANGER.gitPushForce);
  }
  if (sub === 'clean' && (flags.includes('f') || has('--force'))) inspector.dangerous(DANGER.gitClean);
  if (sub === 'branch' && (flags.includes('D') || ((flags.includes('d') || has('--delete')) && (flags.includes('f') || has('--force'))))) {
    inspector.dangerous(DANGER.gitBranchDelete);
  }
  if (sub === 'config' && args.some((arg, index) => GIT_RUNS_COMMAND.test(`${arg}=${args[index + 1] ?? ''}`))) inspector.uncertain(UNCERTAIN.embeddedCommand);
}

/** git settings whose value is a command git runs: `!` aliases, pagers, editors, ssh, hooks, drivers. */
const GIT_RUNS_COMMAND =
  /^(alias\.[^=]+=\s*!|core\.(sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)=|(diff|merge|filter)\.[^=]*\.(command|driver|textconv|clean|smudge|process)=|credential\.helper=|sequence\.editor=|uploadpack\.packobjectshook=|protocol\.ext\.)/i;

const COMPRESSORS = /^(gzip|bzip2|xz|zstd|lz4|pigz|pbzip2|lzip|lzma|lzop|brotli)( -[\w=-]+)*$/;

/** Options through which one program runs another command the guard never sees. */
function embeddedBy(option: RegExp, allowed: (value: string) => boolean = () => false): Check {
  return (args, inspector) => {
    args.forEach((arg, at) => {
      const match = option.exec(arg);
      if (match === null) return;
      const value = match[2] !== undefined && match[2] !== '' ? match[2] : (args[at + 1] ?? '');
      if (!allowed(value)) inspector.uncertain(UNCERTAIN.embeddedCommand);
    });
  };
}

const tar = embeddedBy(/^(--to-command|--checkpoint-action|--use-compress-program|-I|--info-script|-F|--new-volume-script|--rsh-command)(?:=(.*))?$/, (value) => COMPRESSORS.test(value));
const rsync = embeddedBy(/^(-e|--rsh)(?:=(.*))?$/, (value) => /^ssh( -[\w-]+( [\w.@:/-]+)?)*$/.test(value));
const zip = embeddedBy(/^(-TT|--unzip-command)(?:=(.*))?$/);
const ssh = embeddedBy(/^(-o)(?:(.*))?$/, (value) => !/^\s*(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand)\b/i.test(value));
const vim = embeddedBy(/^(-c|--cmd|-S|\+.*)(?:=(.*))?$/, () => false);
const sqlite = (args: readonly string[], inspector: Inspector) => {
  if (args.some((arg) => /(^|\n)\s*\.(shell|system)\b/.test(arg))) inspector.uncertain(UNCERTAIN.embeddedCommand);
};
const sqlClient = (args: readonly string[], inspector: Inspector) => {
  if (args.some((arg) => /\\!|(^|;)\s*system\s/i.test(arg))) inspector.uncertain(UNCERTAIN.embeddedCommand);
};

/** awk programs can run commands: system(), `print | "cmd"`, `"cmd" | getline`. */
function awk(args: readonly string[], inspector: Inspector): void {
  const program = args.includes('-f') ? null : args.find((arg, at) => !arg.startsWith('-') && !['-v', '-F'].includes(args[at - 1] ?? ''));
  if (program !== null && program !== undefined && /\bsystem\s*\(|\|\s*"|"\s*\|\s*getline|\|&/.test(program)) inspector.uncertain(UNCERTAIN.embeddedCommand);
}

// Each alternative consumes a backslash one way only: these patterns see the model's text and must
// not backtrack exponentially on it.
const SED_ADDRESS = String.raw`(?:\d+|\$|/(?:\\.|[^/\\])*/)(?:\s*,\s*(?:\d+|\$|/(?:\\.|[^/\\])*/))?\s*!?\s*`;
const SED_EXECUTES = [
  new RegExp(String.raw`(^|[;{}\n])\s*(?:${SED_ADDRESS})?e(\s|;|$)`),
  new RegExp(String.raw`(^|[;{}\n])\s*(?:${SED_ADDRESS})?s([^\\\n])(?:\\.|(?!\2)[^\\])*\2(?:\\.|(?!\2)[^\\])*\2[gpiImM0-9w]*e`),
];

/** GNU sed's `e` command and `s///e` flag run the pattern space as a shell command. */
function sed(args: readonly string[], inspector: Inspector): void {
  if (args.some((arg) => /^-[a-zA-Z]*i/.test(arg) || arg.startsWith('--in-place'))) {
    for (const arg of operands(args)) inspector.writeTarget(arg);
  }
  if (args.some((arg) => SED_EXECUTES.some((pattern) => pattern.test(arg)))) inspector.uncertain(UNCERTAIN.embeddedCommand);
}

function alias(args: readonly string[], inspector: Inspector): void {
  if (args.some((arg) => arg.includes('='))) inspector.uncertain(UNCERTAIN.inlineDefinition);
}

function trap(args: readonly string[], inspector: Inspector): void {
  const action = args.find((arg) => !arg.startsWith('-'));
  if (action !== undefined && args.length > 1) inspector.source(action);
}

const hardline =
  (rule: Rule): Check =>
  (_args, inspector) =>
    inspector.hardline(rule);
const dangerous =
  (rule: Rule): Check =>
  (_args, inspector) =>
    inspector.dangerous(rule);
const writesOperands: Check = (args, inspector) => {
  for (const arg of operands(args)) inspector.writeTarget(arg);
};

/** Checks by command name (after wrappers are peeled: `sudo busybox rm` is rm). */
export const COMMAND_CHECKS: Record<string, Check> = {
  rm,
  mkfs: hardline(HARD.mkfs),
  mke2fs: hardline(HARD.mkfs),
  dd,
  tee: writesOperands,
  truncate: writesOperands,
  cp: copy,
  mv: copy,
  install: copy,
  ln: copy,
  rsync: (args, inspector) => {
    copy(args, inspector);
    rsync(args, inspector);
  },
  sed,
  kill,
  shutdown: hardline(HARD.shutdown),
  reboot: hardline(HARD.shutdown),
  halt: hardline(HARD.shutdown),
  poweroff: hardline(HARD.shutdown),
  init: (args, inspector) => (args.some((arg) => arg === '0' || arg === '6') ? inspector.hardline(HARD.shutdown) : undefined),
  telinit: (args, inspector) => (args.some((arg) => arg === '0' || arg === '6') ? inspector.hardline(HARD.shutdown) : undefined),
  systemctl: systemctl('systemctl'),
  service: systemctl('service'),
  find,
  xargs,
  parallel,
  chmod,
  chown: (args, inspector) => (shortFlags(args).includes('R') || args.includes('--recursive') ? inspector.dangerous(DANGER.chownRecursive) : undefined),
  git,
  pkill: (args, inspector) => {
    const nine = (arg: string) => /^(9|KILL|SIGKILL)$/i.test(arg);
    if (args.some((arg, at) => /^-(9|KILL|SIGKILL)$/i.test(arg) || /^--signal=(9|KILL|SIGKILL)$/i.test(arg) || ((arg === '-s' || arg === '--signal') && nine(args[at + 1] ?? '')))) {
      inspector.dangerous(DANGER.pkill9);
    }
  },
  killall: dangerous(DANGER.killall),
  shred: dangerous(DANGER.shred),
  tar,
  zip,
  ssh,
  vim,
  vi: vim,
  nvim: vim,
  view: vim,
  ex: vim,
  sqlite3: sqlite,
  psql: sqlClient,
  mysql: sqlClient,
  mariadb: sqlClient,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  alias,
  shopt: (args, inspector) => (args.includes('expand_aliases') ? inspector.uncertain(UNCERTAIN.inlineDefinition) : undefined),
  function: (_args, inspector) => inspector.uncertain(UNCERTAIN.inlineDefinition),
  enable: (args, inspector) => (args.includes('-f') ? inspector.uncertain(UNCERTAIN.inlineDefinition) : undefined),
  trap,
};
