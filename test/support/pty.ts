import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { HERALD_BIN } from './stack.ts';
import { waitFor } from './wait.ts';

/** A command on a pseudo-terminal (util-linux `script`): what it prints, and keys typed at it. */
export interface Terminal {
  child: ChildProcess;
  /** Everything printed so far, escape sequences stripped. */
  screen(): string;
  /** Types text (a "\r" is Enter, "\x03" is Ctrl-C: the terminal turns it into SIGINT). */
  type(text: string): void;
  /** Resolves once the screen, after `from` characters, matches. */
  until(pattern: RegExp | string, options?: { timeoutMs?: number; from?: number }): Promise<void>;
  exited: Promise<number | string>;
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** Drops colours and cursor movement, so tests read what a person reads. */
export function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r/g, '');
}

/**
 * `herald ARGS` (or any argv) on a terminal `columns` wide. The environment is exactly `env` plus
 * PATH and HOME, so nothing of the test runner's leaks in.
 */
export function onTerminal(argv: string[], env: Record<string, string>, options: { cwd?: string; columns?: number } = {}): Terminal {
  const command = `stty cols ${options.columns ?? 100} rows 40; exec ${argv.map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm-256color', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const screen = () => plain(output);
  return {
    child,
    screen,
    type: (text) => child.stdin!.write(text),
    until: async (pattern, { timeoutMs = 60_000, from = 0 } = {}) => {
      const seen = () => (typeof pattern === 'string' ? screen().slice(from).includes(pattern) : pattern.test(screen().slice(from)));
      try {
        await waitFor(async () => seen(), { timeoutMs, what: String(pattern) });
      } catch (error) {
        throw new Error(`${(error as Error).message}; the terminal shows:\n${screen().slice(-2000)}`);
      }
    },
    exited,
  };
}

/** `herald ARGS` from source on a terminal. */
export function heraldOnTerminal(args: string[], env: Record<string, string>, options: { cwd?: string; columns?: number } = {}): Terminal {
  return onTerminal([process.execPath, HERALD_BIN, ...args], env, options);
}
