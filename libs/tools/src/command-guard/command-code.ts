import type { Inspector } from './command-checks.ts';
import { DANGER, UNCERTAIN } from './command-rules.ts';
import { basename, commandHead, FETCHERS, INTERPRETER, SHELLS } from './command-words.ts';
import { lex } from './shell-lexer.ts';
import type { SimpleCommand, Word } from './shell-lexer.ts';

/*
 * Commands that run code: shells, interpreters, eval and source. What they run is checked where it
 * is visible (a literal `bash -c '...'`, an echo piped into sh, a here-string); where it is not (an
 * interpreter's inline program, a pipe from a generator), the call needs a person's approval.
 */

type Feed = 'download' | 'decode' | null;

/** Whether these commands produce downloaded or decoded content (the left side of `| sh`). */
function feedKind(commands: readonly (readonly string[])[]): Feed {
  let kind: Feed = null;
  for (const words of commands) {
    const { start } = commandHead(words);
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

function substitutionFeed(words: readonly Word[]): Feed {
  let kind: Feed = null;
  for (const word of words) {
    for (const source of word.substitutions) {
      const found = feedKind(lex(source).map((command) => command.words.map((w) => w.text)));
      if (found === 'download') return found;
      kind ??= found;
    }
  }
  return kind;
}

function reportFeed(kind: Feed, inspector: Inspector): void {
  if (kind === 'download') inspector.dangerous(DANGER.downloadToShell);
  if (kind === 'decode') inspector.dangerous(DANGER.decodedToShell);
}

/** An interpreter's inline program: `python -c`, `perl -e`/`-ne`, `node -e`/`-p`, `php -r`, `deno eval`... */
const INLINE_FLAG = /^(-[a-zA-Z]*[ce]|--eval|--print|--command|-Command|-EncodedCommand|-eval)(=.*)?$/;
const INLINE_FLAG_OF: readonly [name: RegExp, flag: RegExp][] = [
  [/^perl/, /^-[a-zA-Z]*E$/],
  [/^(node|nodejs|bun)$/, /^-p$/],
  [/^php/, /^-[rR]$/],
];

function inlineProgram(name: string, args: readonly string[]): boolean {
  if (name === 'deno' && args[0] === 'eval') return true;
  const own = INLINE_FLAG_OF.find(([family]) => family.test(name))?.[1];
  return args.some((arg) => INLINE_FLAG.test(arg) || (own !== undefined && own.test(arg)));
}

/** The words of the commands feeding this one through a pipe, nearest last. */
function upstreamOf(pipeline: readonly SimpleCommand[], index: number): string[][] {
  const upstream: string[][] = [];
  for (let at = index; at > 0 && (pipeline[at]!.joinedBy === '|' || pipeline[at]!.joinedBy === '|&'); at -= 1) {
    upstream.push(pipeline[at - 1]!.words.map((word) => word.text));
  }
  return upstream;
}

/** A shell's `-c` program: the first operand after the flag group holding `c`. */
function shellProgram(args: readonly string[]): string | null | undefined {
  const flagAt = args.findIndex((arg) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg));
  if (flagAt < 0) return undefined;
  const program = args.slice(flagAt + 1).find((arg) => !arg.startsWith('-') || arg === '-');
  return program ?? null;
}

export interface CodeRun {
  name: string;
  args: readonly string[];
  argWords: readonly Word[];
  command: SimpleCommand;
  pipeline: readonly SimpleCommand[];
  index: number;
}

/** Paths that name the command's own standard input: `bash /dev/stdin` reads code like `bash` does. */
const STDIN_PATH = /^(\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0|-)$/;

/** Checks a command that runs code; returns false when the command is no shell, interpreter or eval. */
export function checkCode(run: CodeRun, inspector: Inspector): boolean {
  const { name, args } = run;
  const shell = SHELLS.has(name) || name === 'source' || name === '.';
  const interpreter = INTERPRETER.test(name);
  if (!shell && !interpreter && name !== 'eval') return false;
  reportFeed(substitutionFeed(run.argWords), inspector);
  if (name === 'eval') {
    inspector.source(args.join(' '));
    inspector.uncertain(UNCERTAIN.eval);
    return true;
  }
  const program = SHELLS.has(name) ? shellProgram(args) : undefined;
  if (program === null) inspector.uncertain(UNCERTAIN.shellNoCode);
  if (typeof program === 'string') inspector.source(program);
  const inline = interpreter && inlineProgram(name, args);
  if (inline) inspector.uncertain(UNCERTAIN.inlineCode);
  const scriptFile = args.some((arg) => !arg.startsWith('-') && !STDIN_PATH.test(arg));
  // `source file` runs a file, like `bash script.sh`; only its standard input is code to check here.
  if (program === undefined && !inline && !(scriptFile && !args.includes('-s'))) stdinCode(run, shell, inspector);
  return true;
}

/**
 * A shell or interpreter with no program and no script file runs its standard input: a
 * here-document, a here-string, a redirected file or descriptor, or a pipe. What a shell gets from
 * a here-string or an echo is checked as commands; the call needs approval either way.
 */
export function stdinCode(run: Pick<CodeRun, 'command' | 'pipeline' | 'index'>, shell: boolean, inspector: Inspector): void {
  const input = run.command.redirects.filter((redirect) => redirect.operator.startsWith('<') && redirect.operator !== '<>');
  for (const redirect of input) {
    if (shell && redirect.operator.startsWith('<<')) inspector.source(redirect.body ?? redirect.target);
  }
  if (input.length > 0) inspector.uncertain(input.some((redirect) => redirect.operator.startsWith('<<')) ? UNCERTAIN.heredocCode : UNCERTAIN.pipedCode);
  if (run.command.joinedBy !== '|' && run.command.joinedBy !== '|&') return;
  const upstream = upstreamOf(run.pipeline, run.index);
  reportFeed(feedKind(upstream), inspector);
  for (const words of upstream) {
    const { start } = commandHead(words);
    if (shell && start >= 0 && /^(echo|printf)$/.test(basename(words[start]!))) inspector.source(words.slice(start + 1).join(' '));
  }
  inspector.uncertain(UNCERTAIN.pipedCode);
}
