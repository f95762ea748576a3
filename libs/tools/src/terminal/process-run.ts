import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

/** After SIGTERM the process group gets this long to exit before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** Output still buffered in pipes after the command exits is awaited this long. */
const DRAIN_MS = 500;
/** stderr kept apart from a parsed reply: enough for a stack trace. */
const ERRORS_CHARS = 4000;

/** What to start, as whom, with what on descriptors 3, 4...: everything but how it is waited for. */
export interface SpawnSpec {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** Run as this uid and gid, with no supplementary groups (the worker must be root to switch). */
  user?: { uid: number; gid: number };
  /** Data the process reads from descriptors 3, 4...: each a pipe closed after its data. */
  fdData?: readonly Buffer[];
}

export interface ProcessSpec extends SpawnSpec {
  timeoutMs: number;
  /** Output kept; longer output keeps its head and tail. */
  outputChars: number;
  signal: AbortSignal;
  /** Written to the process's stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  /** Keep stderr apart (in `errors`) instead of interleaved with stdout: for a reply that is parsed. */
  separateErrors?: boolean;
  /** A bubblewrap launcher, its command in a PID namespace of its own: a timeout or abort ends it with killSandbox. */
  namespaced?: boolean;
}

export interface ProcessResult {
  output: string;
  /** stderr, when `separateErrors` was asked for; otherwise it is part of `output`. */
  errors?: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

/** Keeps the first and last half of the allowed characters, with a marker saying what was cut. */
export class CappedOutput {
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

function sendSignal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Signals a process group (its leader's pid), if it is still there. */
export const killGroup = (pid: number, name: NodeJS.Signals) => sendSignal(-pid, name);

/** The processes whose parent is `pid`, from /proc (the stat line's fourth field; the name may hold spaces). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/**
 * Ends a bubblewrap sandbox whatever stage of its setup it is in. Its inner process (the PID
 * namespace's init) leaves the launcher's process group (--new-session) before it binds its life
 * to the launcher (--die-with-parent); a launcher killed in between orphans it, and the command
 * runs on. So the launcher is stopped first (it can start nothing more), its child is killed
 * (SIGKILL to a PID namespace's init ends everything in it), then the launcher is ended.
 * SIGTERM to the launcher already ended the sandbox with SIGKILL (--die-with-parent): nothing
 * inside loses a grace period it had.
 */
export function killSandbox(pid: number): void {
  killGroup(pid, 'SIGSTOP');
  for (const child of childrenOf(pid)) sendSignal(child, 'SIGKILL');
  killGroup(pid, 'SIGTERM');
  killGroup(pid, 'SIGCONT');
}

/**
 * Starts a process in its own process group (detached: a timeout or abort kills its children too),
 * as `user` when given (libuv drops the supplementary groups, then sets the gid and the uid, after
 * the chdir), with each of `fdData` written to its own descriptor and closed.
 */
export function spawnWithData(spec: SpawnSpec): ChildProcessWithoutNullStreams {
  const fdData = spec.fdData ?? [];
  const child = spawn(spec.file, [...spec.args], {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', ...fdData.map(() => 'pipe' as const)],
    ...(spec.user === undefined ? {} : { uid: spec.user.uid, gid: spec.user.gid }),
  });
  fdData.forEach((data, index) => {
    const stream = child.stdio[3 + index] as NodeJS.WritableStream & { on(event: 'error', listener: () => void): unknown };
    stream.on('error', () => undefined);
    stream.end(data);
  });
  return child as unknown as ChildProcessWithoutNullStreams;
}

/**
 * Runs a process in its own process group with stdin closed, keeps capped output, and kills the
 * whole group at the timeout or on abort (TERM, then KILL after a grace period).
 */
export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  spec.signal.throwIfAborted();
  const child = spawnWithData(spec);
  const output = new CappedOutput(spec.outputChars);
  const errors = spec.separateErrors === true ? new CappedOutput(ERRORS_CHARS) : output;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => errors.push(chunk));
  // Without input stdin is closed at once: a command reading it sees its end, as with /dev/null.
  // A child that exits without reading its input makes the write fail with EPIPE; its exit says more.
  child.stdin.on('error', () => undefined).end(spec.input);
  const drained = Promise.all([new Promise((resolve) => child.stdout.once('close', resolve)), new Promise((resolve) => child.stderr.once('close', resolve))]);
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (child.pid === undefined) return;
    // A sandbox stopped while it sets up would leave its command running (see killSandbox).
    if (spec.namespaced === true) killSandbox(child.pid);
    else killGroup(child.pid, 'SIGTERM');
    killTimer ??= setTimeout(() => killGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, spec.timeoutMs);
  spec.signal.addEventListener('abort', stop, { once: true });
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
    spec.signal.throwIfAborted();
    const result: ProcessResult = { output: output.toString(), exitCode, signal: exitSignal, timedOut };
    return errors === output ? result : { ...result, errors: errors.toString() };
  } finally {
    clearTimeout(timer);
    clearTimeout(killTimer);
    spec.signal.removeEventListener('abort', stop);
  }
}
