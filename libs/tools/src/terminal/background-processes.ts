import { randomBytes } from 'node:crypto';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ProcessesConfig } from '@herald/core';
import { OutputRing } from './output-ring.ts';
import { killGroup, killSandbox } from './process-run.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';

/** After SIGTERM a process group gets this long before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** The tail of output a notice carries. */
export const NOTICE_TAIL_CHARS = 2000;
/**
 * Ended processes a session keeps (newest first ended), so `process list`/`poll` still show recent
 * exits; older ones are dropped with their output rings, which otherwise stay for the worker's life.
 */
export const ENDED_KEPT_PER_SESSION = 20;
/**
 * Ended processes a worker keeps over all its sessions, the oldest ended first out: a worker that
 * serves sessions for weeks would otherwise hold 20 output rings for every session that ever ran one.
 */
export const ENDED_KEPT_PER_WORKER = 200;

export type ProcessStatus = 'running' | 'exited' | 'killed';

export interface BackgroundProcess {
  id: string;
  /** The Herald session that started it: only that session sees it. */
  sessionId: string;
  /** The person whose turn started it: the notice is posted on their behalf. */
  userId: string;
  command: string;
  pid: number;
  startedAt: Date;
  notifyOnExit: boolean;
  status: ProcessStatus;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why it ended, when Herald ended it (killed by the model, the runtime limit, the worker stopping). */
  endReason: string | null;
  output: OutputRing;
  /** Where the last poll stopped reading. */
  polled: number;
  exited: Promise<void>;
  child: ChildProcessWithoutNullStreams;
  /** Started by bubblewrap, whose sandbox lives in a PID namespace of its own (killSandbox). */
  namespaced: boolean;
}

/** A process that ended and was started with notify_on_exit: the session gets a turn with this. */
export interface ExitNotice {
  sessionId: string;
  userId: string;
  processId: string;
  command: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  reason: string | null;
  tail: string;
}

export interface BackgroundProcessesOptions {
  settings: ProcessesConfig;
  /** Posts the notice into the session (an internal event) and wakes it; errors are the caller's to log. */
  notify(notice: ExitNotice): Promise<void>;
  /** Tells one session, once, that the worker stopped and ended its processes. */
  notifyStopped(sessionId: string, ended: readonly BackgroundProcess[]): Promise<void>;
  /** Ended processes kept per session and per worker (ENDED_KEPT_PER_SESSION, ENDED_KEPT_PER_WORKER unless given). */
  endedKept?: { perSession: number; perWorker: number };
}

export interface StartInput {
  sessionId: string;
  userId: string;
  command: string;
  workspace: string;
  network: boolean;
  notifyOnExit: boolean;
}

export class ProcessLimitError extends Error {
  override name = 'ProcessLimitError';
}

/**
 * The background processes of one worker: they outlive the turn that started them, never the
 * worker. Bounded per session and per worker; each keeps its newest output in a ring; one that
 * ends with notify_on_exit starts a new turn in its session through `notify`.
 */
export class BackgroundProcesses {
  readonly #options: BackgroundProcessesOptions;
  readonly #processes = new Map<string, BackgroundProcess>();
  /** Each session's ended processes, in the order they ended: the oldest go past ENDED_KEPT_PER_SESSION. */
  readonly #ended = new Map<string, string[]>();
  /** Every session's ended processes in the order they ended (a Set keeps insertion order). */
  readonly #endedOrder = new Set<string>();
  #stopping = false;

  constructor(options: BackgroundProcessesOptions) {
    this.#options = options;
  }

  get settings(): ProcessesConfig {
    return this.#options.settings;
  }

  running(sessionId?: string): BackgroundProcess[] {
    return [...this.#processes.values()].filter((p) => p.status === 'running' && (sessionId === undefined || p.sessionId === sessionId));
  }

  /** The starts in progress (the sandbox claims the workspace first), by session: they count toward the limits, and stopAll waits for them. */
  readonly #starting = new Map<Promise<unknown>, string>();

  /** The session's processes, running or ended (the newest ENDED_KEPT_PER_SESSION ended ones), oldest first. */
  list(sessionId: string): BackgroundProcess[] {
    return [...this.#processes.values()].filter((p) => p.sessionId === sessionId);
  }

  get(sessionId: string, id: string): BackgroundProcess | undefined {
    const found = this.#processes.get(id);
    return found?.sessionId === sessionId ? found : undefined;
  }

  async start(sandbox: Sandbox, input: StartInput): Promise<BackgroundProcess> {
    const { perSession, perWorker, maxRuntimeMs, outputChars } = this.#options.settings;
    if (this.#stopping) throw new ProcessLimitError('this worker is stopping; start the process again in a moment');
    // Starts still being set up count too, so two at once cannot both take the last place.
    const starting = [...this.#starting.values()].filter((sessionId) => sessionId === input.sessionId).length;
    if (this.running(input.sessionId).length + starting >= perSession) {
      throw new ProcessLimitError(`this session already runs ${perSession} background processes (the limit); kill one or wait for one to end`);
    }
    if (this.running().length + this.#starting.size >= perWorker) throw new ProcessLimitError(`this worker already runs ${perWorker} background processes (the limit); try again later`);
    // Tracked in the same step as the child is had, so a stopAll waiting on this start finds it.
    const started = sandbox
      .start({ command: input.command, workspace: input.workspace, network: input.network, timeoutMs: maxRuntimeMs })
      .then((child) => this.#track(child, input, new OutputRing(outputChars), sandbox.kind === 'bwrap'));
    this.#starting.set(started, input.sessionId);
    const entry = await started.finally(() => this.#starting.delete(started));
    const limit = setTimeout(() => this.#end(entry, `ran longer than ${Math.round(maxRuntimeMs / 1000)} s`), maxRuntimeMs);
    void entry.exited.then(() => clearTimeout(limit));
    return entry;
  }

  #track(child: ChildProcessWithoutNullStreams, input: StartInput, output: OutputRing, namespaced: boolean): BackgroundProcess {
    let settle!: () => void;
    const entry: BackgroundProcess = {
      id: `proc_${randomBytes(6).toString('hex')}`,
      sessionId: input.sessionId,
      userId: input.userId,
      command: input.command,
      pid: child.pid ?? 0,
      startedAt: new Date(),
      notifyOnExit: input.notifyOnExit,
      status: 'running',
      exitCode: null,
      signal: null,
      endReason: null,
      output,
      polled: 0,
      exited: new Promise<void>((resolve) => (settle = resolve)),
      child,
      namespaced,
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
    child.stdin.on('error', () => undefined);
    child.once('error', (error) => {
      output.push(`\n[could not start: ${error.message}]\n`);
      this.#settle(entry, null, null, settle);
    });
    child.once('exit', (code, signal) => this.#settle(entry, code, signal, settle));
    this.#processes.set(entry.id, entry);
    return entry;
  }

  #settle(entry: BackgroundProcess, code: number | null, signal: NodeJS.Signals | null, settle: () => void): void {
    if (entry.status !== 'running') return;
    // Whatever it left behind in its group goes with it.
    if (entry.pid > 0) killGroup(entry.pid, 'SIGKILL');
    entry.status = entry.endReason === null ? 'exited' : 'killed';
    entry.exitCode = code;
    entry.signal = signal;
    settle();
    this.#prune(entry);
    if (!entry.notifyOnExit || this.#stopping) return;
    const notice: ExitNotice = {
      sessionId: entry.sessionId,
      userId: entry.userId,
      processId: entry.id,
      command: entry.command,
      exitCode: code,
      signal,
      reason: entry.endReason,
      tail: entry.output.tail(NOTICE_TAIL_CHARS),
    };
    void this.#options.notify(notice).catch(() => undefined);
  }

  /** Keeps the session's and the worker's newest ended processes only; an older one goes with its output ring. */
  #prune(entry: BackgroundProcess): void {
    const ended = [...(this.#ended.get(entry.sessionId) ?? []), entry.id];
    this.#ended.set(entry.sessionId, ended);
    this.#endedOrder.add(entry.id);
    const kept = this.#options.endedKept ?? { perSession: ENDED_KEPT_PER_SESSION, perWorker: ENDED_KEPT_PER_WORKER };
    for (const id of ended.slice(0, Math.max(0, ended.length - kept.perSession))) this.#forget(entry.sessionId, id);
    for (const id of this.#endedOrder) {
      if (this.#endedOrder.size <= kept.perWorker) break;
      const sessionId = this.#processes.get(id)?.sessionId;
      if (sessionId === undefined) this.#endedOrder.delete(id);
      else this.#forget(sessionId, id);
    }
  }

  #forget(sessionId: string, id: string): void {
    this.#processes.delete(id);
    this.#endedOrder.delete(id);
    const left = (this.#ended.get(sessionId) ?? []).filter((other) => other !== id);
    if (left.length === 0) this.#ended.delete(sessionId);
    else this.#ended.set(sessionId, left);
  }

  /** Ends a process group: TERM, then KILL after a grace period (a sandbox: killSandbox). Resolves once it exited. */
  #end(entry: BackgroundProcess, reason: string): Promise<void> {
    if (entry.status !== 'running') return entry.exited;
    entry.endReason = reason;
    if (entry.namespaced) killSandbox(entry.pid);
    else killGroup(entry.pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(entry.pid, 'SIGKILL'), KILL_GRACE_MS);
    return entry.exited.finally(() => clearTimeout(timer));
  }

  kill(entry: BackgroundProcess): Promise<void> {
    return this.#end(entry, 'killed with the process tool');
  }

  /**
   * The worker is stopping: every process ends, and each session that had running ones is told
   * once (not once per process). Nothing is started meanwhile; a start already under way (its
   * sandbox still setting up) is waited for, so its process is ended with the rest, not left running.
   */
  async stopAll(): Promise<void> {
    this.#stopping = true;
    await Promise.allSettled(this.#starting.keys());
    const running = this.running();
    await Promise.all(running.map((entry) => this.#end(entry, 'the worker stopped')));
    const bySession = new Map<string, BackgroundProcess[]>();
    for (const entry of running) bySession.set(entry.sessionId, [...(bySession.get(entry.sessionId) ?? []), entry]);
    await Promise.all([...bySession].map(([sessionId, ended]) => this.#options.notifyStopped(sessionId, ended).catch(() => undefined)));
  }
}
