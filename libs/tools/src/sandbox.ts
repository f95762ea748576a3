import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxConfig } from '@herald/core';
import { baseBwrapArgs, callBwrapArgs, nodePrefixOf } from './bwrap-args.ts';
import { runProcess } from './process-run.ts';
import type { ProcessResult } from './process-run.ts';
import { SANDBOX_PATH, sandboxEnv } from './sandbox-env.ts';

/** One command for the sandbox: the session's workspace is the only writable place it sees. */
export interface SandboxCommand {
  command: string;
  workspace: string;
  network: boolean;
  timeoutMs: number;
  outputChars: number;
  signal: AbortSignal;
}

/** A Node.js program for the sandbox, run by the worker's own node binary, its reply parsed from stdout. */
export interface SandboxScript {
  /** Node's arguments: options, then the entry file and its arguments. */
  nodeArgs: readonly string[];
  /** Host paths the program needs, shown read-only (its own code; never the worker's config). */
  readOnlyPaths: readonly string[];
  input: string;
  workspace: string;
  timeoutMs: number;
  outputChars: number;
  signal: AbortSignal;
}

/** A long-running command: stdin stays open, nothing is awaited; the caller owns the process. */
export interface BackgroundCommand {
  command: string;
  workspace: string;
  network: boolean;
  /** The CPU-time limit is set from it; the caller kills the process group at the wall-clock limit. */
  timeoutMs: number;
}

export interface Sandbox {
  /** bwrap: namespaces that hide the platform; none: the worker's own user and view (HERALD_SANDBOX=none). */
  readonly kind: 'bwrap' | 'none';
  run(command: SandboxCommand): Promise<ProcessResult>;
  /** Starts a background command in its own process group (the leader's pid kills the group). */
  start(command: BackgroundCommand): ChildProcessWithoutNullStreams;
  /** Present in bubblewrap only: unconfined, the file tools run in the worker's own process instead. */
  runNode?(script: SandboxScript): Promise<ProcessResult>;
}

/** The sandbox this worker can have, or none, with the line to log at start. */
export type SandboxChoice = { sandbox: Sandbox; notice: string | null } | { sandbox: null; notice: string };

export interface SandboxOptions {
  settings: SandboxConfig;
  /** The worker's environment: only locale variables and the names granted in settings.env are taken. */
  env: Readonly<Record<string, string | undefined>>;
}

const OPEN_FILES = 4096;
const PROBE_TIMEOUT_MS = 15_000;

/** Found on the worker's own PATH: that is where an operator installs or withholds it. */
function findExecutable(name: string, path: string): string | null {
  for (const dir of path.split(':')) if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/**
 * The shell that runs the command, with resource limits set first. A limit above the inherited
 * hard limit cannot be raised and is left as it is, which is stricter; so failures are ignored.
 */
function limitedShell(command: string, settings: SandboxConfig, timeoutMs: number): [string, string[]] {
  const bash = existsSync('/bin/bash');
  const cpuSeconds = Math.ceil(timeoutMs / 1000) + 1;
  const limits = [
    'ulimit -c 0',
    `ulimit -t ${cpuSeconds}`,
    `ulimit -d ${settings.memoryMb * 1024}`,
    `ulimit -n ${OPEN_FILES}`,
    // bash counts file size in 1024-byte blocks; dash in 512-byte ones.
    `ulimit -f ${settings.maxFileMb * (bash ? 1024 : 2048)}`,
    ...(bash ? [`ulimit -u ${settings.maxProcesses}`] : []),
  ];
  const shell = bash ? '/bin/bash' : '/bin/sh';
  return [shell, ['-c', `{ ${limits.join('; ')}; } 2>/dev/null; exec "$0" -c "$1"`, shell, command]];
}

class Bubblewrap implements Sandbox {
  readonly kind = 'bwrap';
  readonly proc: boolean;
  readonly #bwrap: string;
  readonly #base: string[];
  readonly #options: SandboxOptions;

  constructor(bwrap: string, options: SandboxOptions, proc: boolean) {
    this.proc = proc;
    this.#bwrap = bwrap;
    this.#options = options;
    const uid = process.getuid?.() ?? 0;
    const gid = process.getgid?.() ?? 0;
    this.#base = baseBwrapArgs({
      readOnlyPaths: options.settings.readOnlyPaths,
      nodePrefix: nodePrefixOf(process.execPath),
      tmpBytes: options.settings.maxFileMb * 1024 * 1024,
      // Run as root, the worker's uid maps to 0 outside; inside, the command is nobody, not root.
      uid: uid === 0 ? 65534 : uid,
      gid: gid === 0 ? 65534 : gid,
      proc,
    });
  }

  #invocation(command: BackgroundCommand, readOnlyPaths: readonly string[]): { file: string; args: string[]; env: Record<string, string> } {
    const [shell, shellArgs] = limitedShell(command.command, this.#options.settings, command.timeoutMs);
    const nodeBin = join(nodePrefixOf(process.execPath), 'bin');
    const path = SANDBOX_PATH.split(':').includes(nodeBin) ? SANDBOX_PATH : `${SANDBOX_PATH}:${nodeBin}`;
    // bwrap itself gets the clean environment too: the sandbox's PID 1 is a copy of it, and its
    // /proc/1/environ is readable from inside.
    const env = sandboxEnv(this.#options.env, this.#options.settings.env, command.workspace, path);
    return { file: this.#bwrap, args: [...callBwrapArgs(this.#base, command.workspace, command.network, readOnlyPaths), shell, ...shellArgs], env };
  }

  start(command: BackgroundCommand): ChildProcessWithoutNullStreams {
    const { file, args, env } = this.#invocation(command, []);
    return spawn(file, args, { cwd: command.workspace, env, detached: true, stdio: 'pipe' });
  }

  run(command: SandboxCommand, readOnlyPaths: readonly string[] = [], input?: string): Promise<ProcessResult> {
    const { file, args, env } = this.#invocation(command, readOnlyPaths);
    return runProcess({
      file,
      args,
      env,
      cwd: command.workspace,
      timeoutMs: command.timeoutMs,
      outputChars: command.outputChars,
      signal: command.signal,
      ...(input === undefined ? {} : { input, separateErrors: true }),
    });
  }

  /** Through the same shell, so the program gets the terminal's rlimits; no network. */
  runNode(script: SandboxScript): Promise<ProcessResult> {
    const command = ['exec', process.execPath, ...script.nodeArgs].map(shellQuote).join(' ');
    return this.run({ ...script, command, network: false }, script.readOnlyPaths, script.input);
  }
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

class Unconfined implements Sandbox {
  readonly kind = 'none';
  readonly #options: SandboxOptions;

  constructor(options: SandboxOptions) {
    this.#options = options;
  }

  start(command: BackgroundCommand): ChildProcessWithoutNullStreams {
    const [shell, shellArgs] = limitedShell(command.command, this.#options.settings, command.timeoutMs);
    const env = sandboxEnv(this.#options.env, this.#options.settings.env, command.workspace);
    return spawn(shell, shellArgs, { cwd: command.workspace, env, detached: true, stdio: 'pipe' });
  }

  run(command: SandboxCommand): Promise<ProcessResult> {
    const [shell, shellArgs] = limitedShell(command.command, this.#options.settings, command.timeoutMs);
    return runProcess({
      file: shell,
      args: shellArgs,
      env: sandboxEnv(this.#options.env, this.#options.settings.env, command.workspace),
      cwd: command.workspace,
      timeoutMs: command.timeoutMs,
      outputChars: command.outputChars,
      signal: command.signal,
    });
  }
}

const HOW_TO_GET_TOOLS =
  'install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or set HERALD_SANDBOX=none if one trusted person uses this host';

/** Runs `true` in a real sandbox once: namespaces may be refused by the kernel, seccomp or AppArmor. */
async function probe(sandbox: Sandbox): Promise<string | null> {
  const workspace = await mkdtemp(join(tmpdir(), 'herald-sandbox-probe-'));
  try {
    const result = await sandbox.run({ command: 'true', workspace, network: false, timeoutMs: PROBE_TIMEOUT_MS, outputChars: 2000, signal: new AbortController().signal });
    if (result.exitCode === 0) return null;
    return result.output.trim().split('\n')[0] || `bwrap exited with ${result.exitCode ?? result.signal}`;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/**
 * The sandbox the terminal and file tools run behind. Secure by default: without a working
 * bubblewrap those tools are not offered, and the notice says how to get them; HERALD_SANDBOX=none
 * offers them unconfined and says so at every start.
 */
export async function openSandbox(options: SandboxOptions): Promise<SandboxChoice> {
  if (options.settings.mode === 'none') {
    return {
      sandbox: new Unconfined(options),
      notice: 'HERALD_SANDBOX=none: terminal and file tools run unconfined, as the worker\'s own user with its files and network; use this only for one trusted person',
    };
  }
  const bwrap = findExecutable('bwrap', options.env.PATH ?? SANDBOX_PATH);
  if (bwrap === null) return { sandbox: null, notice: `terminal and file tools are off: bubblewrap (bwrap) is not installed; ${HOW_TO_GET_TOOLS}` };
  const sandbox = new Bubblewrap(bwrap, options, true);
  const failure = await probe(sandbox);
  if (failure === null) return { sandbox, notice: null };
  // A container's masked /proc makes the kernel refuse a fresh one; everything else may still work.
  const withoutProc = new Bubblewrap(bwrap, options, false);
  if ((await probe(withoutProc)) === null) {
    return { sandbox: withoutProc, notice: `terminal commands run in a bubblewrap sandbox without /proc (${failure}): the container's /proc is masked; commands like ps have nothing to read` };
  }
  return { sandbox: null, notice: `terminal and file tools are off: bubblewrap cannot create a sandbox here (${failure}); ${HOW_TO_GET_TOOLS}` };
}

/** A bubblewrap sandbox as openSandbox builds it, without the probe; `proc: false` is the masked-/proc variant. */
export function bubblewrapSandbox(bwrap: string, options: SandboxOptions, proc: boolean): Sandbox {
  return new Bubblewrap(bwrap, options, proc);
}
