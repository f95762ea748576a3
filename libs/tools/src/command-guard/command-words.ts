/** Word-level facts the command guard shares: names, flags and the wrappers around a command. */

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'fish', 'csh', 'tcsh', 'yash', 'busybox-sh', 'rbash']);
export const INTERPRETER =
  /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|php[0-9.]*|lua[0-9.]*|luajit|deno|bun|tclsh[0-9.]*|wish|Rscript|R|julia|osascript|pwsh|powershell|groovy|jshell|scala|elixir|erl|guile|racket|sbcl)$/;
export const FETCHERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'lwp-download', 'lwp-request', 'GET', 'POST']);
/** Assignments that make a shell or the dynamic linker run other code. */
export const STARTUP_VARIABLES =
  /^(BASH_ENV|ENV|PROMPT_COMMAND|PS[0-4]|LD_PRELOAD|LD_AUDIT|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PERL5OPT|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_PROXY_COMMAND|GIT_ASKPASS|SSH_ASKPASS)$/;

export function basename(word: string): string {
  return word.includes('/') ? word.slice(word.lastIndexOf('/') + 1) : word;
}

/** The letters of every short flag group (`-rf -x` gives "rfx"). */
export function shortFlags(args: readonly string[]): string {
  return args
    .filter((arg) => /^-[A-Za-z0-9]+$/.test(arg))
    .map((arg) => arg.slice(1))
    .join('');
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const KEYWORDS = /^(!|then|do|else|elif|if|while|until|time|coproc)$/;

/** A program that runs the command given after its own options and operands. */
interface Wrapper {
  /** Options that take the next word as their value. */
  valued?: readonly string[];
  /** Options whose value is a whole command line (`env -S "..."`, `su -c "..."`). */
  code?: readonly string[];
  /** Operands before the command (`timeout 5`, `chroot /srv`, `flock /tmp/lock`). */
  operands?: number;
  /** The rest is joined and run by `sh -c` (`watch`, `sg group ...`). */
  joinsArgs?: boolean;
  /** `command -v rm` runs nothing. */
  queries?: readonly string[];
  /** `env` takes NAME=value words before the command. */
  assignments?: boolean;
}

const WRAPPERS: Record<string, Wrapper> = {
  sudo: { valued: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group'] },
  doas: { valued: ['-u', '-C'] },
  pkexec: { valued: ['--user'] },
  run0: { valued: ['-u', '--user'] },
  env: { valued: ['-u', '-C', '--unset', '--chdir'], code: ['-S', '--split-string'], assignments: true },
  command: { queries: ['-v', '-V'] },
  builtin: {},
  exec: { valued: ['-a'] },
  nohup: {},
  setsid: {},
  unbuffer: {},
  busybox: {},
  toybox: {},
  nice: { valued: ['-n'] },
  ionice: { valued: ['-c', '-n', '-p'] },
  stdbuf: { valued: ['-i', '-o', '-e'] },
  chrt: { valued: ['-p'], operands: 1 },
  taskset: { operands: 1 },
  timeout: { valued: ['-s', '-k', '--signal', '--kill-after'], operands: 1 },
  chroot: { valued: ['--userspec', '--groups'], operands: 1 },
  flock: { valued: ['-w', '-E', '--timeout', '--conflict-exit-code'], code: ['-c', '--command'], operands: 1 },
  unshare: {},
  nsenter: { valued: ['-t', '--target'] },
  setpriv: { valued: ['--reuid', '--regid', '--groups', '--inh-caps', '--bounding-set'] },
  su: { valued: ['-s', '--shell', '-g', '-G'], code: ['-c', '--command'] },
  runuser: { valued: ['-u', '-g', '-G', '-s'], code: ['-c', '--command'] },
  script: { valued: ['-t', '-T', '-I', '-O', '-B'], code: ['-c', '--command'] },
  strace: { valued: ['-e', '-o', '-p', '-s', '-u', '-P', '-E'] },
  ltrace: { valued: ['-e', '-o', '-p', '-s', '-u'] },
  watch: { valued: ['-n', '-d', '--interval'], joinsArgs: true },
  sg: { operands: 1, joinsArgs: true },
  'xvfb-run': { valued: ['-a', '-s', '-n'] },
  'dbus-run-session': {},
};

/** Where a command really starts, once wrappers are peeled off; or the command line a wrapper runs. */
export interface CommandHead {
  /** Index of the command word; -1 when nothing runs (only assignments, `command -v rm`). */
  start: number;
  /** A command line handed to a wrapper as one string (`env -S`, `su -c`, `watch`). */
  source: string | null;
  /** Variables assigned before the command (`FOO=1 cmd`). */
  assigned: string[];
}

/** Skips a wrapper's options and operands; returns the index after them, or a command line it runs. */
function peel(words: readonly string[], at: number, wrapper: Wrapper): { at: number; source: string | null } {
  let i = at;
  while (i < words.length && (words[i]!.startsWith('-') || (wrapper.assignments === true && ASSIGNMENT.test(words[i]!)))) {
    const option = words[i]!;
    i += 1;
    if (option === '--') break;
    if (wrapper.queries?.includes(option)) return { at: -1, source: null };
    if (wrapper.code?.includes(option)) return { at: -1, source: words[i] ?? '' };
    if (wrapper.valued?.includes(option)) i += 1;
  }
  i += wrapper.operands ?? 0;
  // `flock FILE -c "cmd"`: the command line may also follow the operands.
  if (wrapper.code?.includes(words[i] ?? '')) return { at: -1, source: words[i + 1] ?? '' };
  if (wrapper.joinsArgs === true) return { at: -1, source: words.slice(i).join(' ') };
  return { at: i, source: null };
}

export function commandHead(words: readonly string[]): CommandHead {
  const assigned: string[] = [];
  let i = 0;
  for (;;) {
    for (; i < words.length && (ASSIGNMENT.test(words[i]!) || KEYWORDS.test(words[i]!)); i += 1) {
      if (ASSIGNMENT.test(words[i]!)) assigned.push(words[i]!.slice(0, words[i]!.search(/[[+=]/)));
    }
    const word = words[i];
    if (word === undefined) return { start: -1, source: null, assigned };
    const wrapper = Object.hasOwn(WRAPPERS, basename(word)) ? WRAPPERS[basename(word)]! : undefined;
    if (wrapper === undefined) return { start: i, source: null, assigned };
    const peeled = peel(words, i + 1, wrapper);
    if (peeled.at < 0) return { start: -1, source: peeled.source, assigned };
    i = peeled.at;
  }
}

/** Whether a command name is computed when the shell runs it rather than written out. */
export function computedName(name: string, hasSubstitution: boolean): boolean {
  if (name === '[' || name === '[[') return false;
  return hasSubstitution || /[$*?[\]{}`]/.test(name) || /^~[^/]/.test(name);
}
