import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { checkCommand } from './command-guard.ts';
import { defineTool } from './tool.ts';
import type { Tool } from './tool.ts';
import { ensureWorkspace } from './workspace-paths.ts';

export const TERMINAL_DEFAULT_TIMEOUT_S = 60;
/** After SIGTERM the process group gets this long to exit before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** Output still buffered in pipes after the command exits is awaited this long. */
const DRAIN_MS = 500;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface TerminalToolOptions {
  /** Longest a command may run (HERALD_TERMINAL_MAX_TIMEOUT_MS). */
  maxTimeoutMs?: number;
  /** Output kept for the model; longer output keeps its head and tail (HERALD_TERMINAL_OUTPUT_CHARS). */
  outputChars?: number;
  /**
   * The environment the worker runs in (process.env). Only PATH, LANG, LC_* and TZ are taken from
   * it, so database URLs, API keys, tokens and HERALD_* settings never reach a command.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

const PASSED_ENV = /^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ)$/;
/** Never passed on, even if a future change widens PASSED_ENV. */
const SECRET_ENV = /(^HERALD_|^DATABASE_URL$|^REDIS_URL$|_API_KEY$|_TOKEN$|_SECRET$|_PASSWORD$|^AWS_|^PG[A-Z]+$)/;

export function terminalEnv(base: Readonly<Record<string, string | undefined>>, workspace: string): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH, LANG: 'C.UTF-8' };
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && PASSED_ENV.test(name) && !SECRET_ENV.test(name)) env[name] = value;
  }
  return { ...env, HOME: workspace, PWD: workspace, TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' };
}

/** Keeps the first and last half of the allowed characters, with a marker saying what was cut. */
class CappedOutput {
  readonly #cap: number;
  #head = '';
  #tail = '';
  #total = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  push(chunk: string): void {
    this.#total += chunk.length;
    const half = Math.floor(this.#cap / 2);
    if (this.#head.length < half) {
      const room = half - this.#head.length;
      this.#head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk.length === 0) return;
    this.#tail += chunk;
    if (this.#tail.length > 2 * half) this.#tail = this.#tail.slice(-half);
  }

  toString(): string {
    const half = Math.floor(this.#cap / 2);
    if (this.#total <= this.#cap) return this.#head + this.#tail;
    const tail = this.#tail.slice(-half);
    const omitted = this.#total - this.#head.length - tail.length;
    return `${this.#head}\n[... ${omitted} characters of output omitted ...]\n${tail}`;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

interface RunResult {
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

async function run(command: string, cwd: string, env: Record<string, string>, timeoutMs: number, outputChars: number, signal: AbortSignal): Promise<RunResult> {
  signal.throwIfAborted();
  const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
  // detached: the command leads its own process group, so a timeout or abort kills its children too.
  const child = spawn(shell, ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = new CappedOutput(outputChars);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  const drained = Promise.all([
    new Promise((resolve) => child.stdout.once('close', resolve)),
    new Promise((resolve) => child.stderr.once('close', resolve)),
  ]);

  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (child.pid === undefined) return;
    killGroup(child.pid, 'SIGTERM');
    killTimer ??= setTimeout(() => killGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, timeoutMs);
  signal.addEventListener('abort', stop, { once: true });

  try {
    const [exitCode, exitSignal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, sig) => resolve([code, sig]));
    });
    // Nothing a command starts outlives it: background jobs it left behind are killed with the group.
    if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    // A process that left the group (setsid) may hold the pipes open; don't wait for it.
    let drainTimer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise((resolve) => (drainTimer = setTimeout(resolve, DRAIN_MS)))]);
    clearTimeout(drainTimer);
    child.stdout.destroy();
    child.stderr.destroy();
    signal.throwIfAborted();
    return { output: output.toString(), exitCode, signal: exitSignal, timedOut };
  } finally {
    clearTimeout(timer);
    clearTimeout(killTimer);
    signal.removeEventListener('abort', stop);
  }
}

export function createTerminalTool(options: TerminalToolOptions = {}): Tool {
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const outputChars = options.outputChars ?? 50_000;
  const baseEnv = options.env ?? {};
  const maxTimeoutS = Math.max(1, Math.floor(maxTimeoutMs / 1000));
  const schema = z.object({
    command: z.string().min(1).max(100_000).describe('The shell command (bash -c)'),
    timeout: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`Seconds before the command is killed (default ${TERMINAL_DEFAULT_TIMEOUT_S}, at most ${maxTimeoutS})`),
  });
  return defineTool({
    name: 'terminal',
    toolset: 'terminal',
    description:
      'Run a shell command in your workspace directory (non-interactive, no stdin). Returns combined stdout/stderr and the exit code. ' +
      'Long output keeps its beginning and end.',
    guidance:
      'terminal commands run in the workspace, are killed at the timeout with any processes they started, and destructive ones need the person\'s approval or are refused.',
    schema,
    replaySafe: false,
    refuse(args) {
      const check = checkCommand(args.command);
      return check.verdict === 'hardline' ? `Refused: this command ${check.description} (${check.patternKey}). It is never allowed.` : null;
    },
    needsApproval(args) {
      const check = checkCommand(args.command);
      if (check.verdict !== 'dangerous') return null;
      return { patternKey: check.patternKey!, reason: `This command ${check.description} (${check.patternKey}).` };
    },
    async execute(args, context) {
      const workspace = await ensureWorkspace(context.workspaceDir);
      const requested = args.timeout ?? TERMINAL_DEFAULT_TIMEOUT_S;
      const seconds = Math.min(requested, maxTimeoutS);
      const result = await run(args.command, workspace, terminalEnv(baseEnv, workspace), seconds * 1000, outputChars, context.signal);
      const notes: string[] = [];
      if (args.timeout !== undefined && requested > seconds) notes.push(`timeout lowered to the ${maxTimeoutS} s maximum`);
      if (result.timedOut) notes.push(`timed out after ${seconds} s; the command and its child processes were killed`);
      const status = result.exitCode !== null ? `exit code: ${result.exitCode}` : `killed by ${result.signal ?? 'signal'}`;
      const output = result.output === '' ? '(no output)' : result.output.replace(/\n$/, '');
      return `${output}\n[${[status, ...notes].join('; ')}]`;
    },
  });
}
