import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxConfig } from '@herald/core';
import { baseBwrapArgs, callBwrapArgs, nodePrefixOf } from './bwrap-args.ts';
import { runProcess, spawnWithData } from '../terminal/process-run.ts';
import type { ProcessResult, SpawnSpec } from '../terminal/process-run.ts';
import { SANDBOX_PATH, sandboxEnv } from './sandbox-env.ts';
import { claimWorkspace, sandboxUser } from './sandbox-user.ts';
import type { SandboxUser } from './sandbox-user.ts';
import { seccompFilter } from './seccomp-filter.ts';
import { bwrapLaunch, unconfinedLaunch } from './launch.ts';
import type { LaunchSpec, SandboxLaunch } from './launch.ts';

/** One command for the sandbox: the session's workspace is the only writable place it sees. */
export interface SandboxCommand {
  command: string;
  workspace: string;
  network: boolean;
  /** May the command create user namespaces (its toolset is in HERALD_SANDBOX_USERNS)? Off by default. */
  userNamespaces?: boolean;
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

export type { LaunchSpec, SandboxLaunch } from './launch.ts';

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
  /** Who commands run as, outside and inside (bubblewrap only). */
  readonly user?: SandboxUser;
  run(command: SandboxCommand): Promise<ProcessResult>;
  /** How to start a long-running program under the terminal's rules (launch.ts). */
  launch(program: SandboxLaunch): LaunchSpec;
  /** Starts a background command in its own process group (the leader's pid kills the group). */
  start(command: BackgroundCommand): Promise<ChildProcessWithoutNullStreams>;
  /** Present in bubblewrap only: unconfined, the file tools run in the worker's own process instead. */
  runNode?(script: SandboxScript): Promise<ProcessResult>;
}

/** The sandbox this worker can have, or none, with the line to log at start. */
export type SandboxChoice = { sandbox: Sandbox; notice: string | null } | { sandbox: null; notice: string };

export interface SandboxOptions {
  settings: SandboxConfig;
  /** The worker's environment: only locale variables and the names granted in settings.env are taken. */
  env: Readonly<Record<string, string | undefined>>;
  /** Where session workspaces live (HERALD_WORKSPACE_ROOT): the start probe runs there, so the sandbox's user must reach it. */
  workspaceRoot?: string;
}

const OPEN_FILES = 4096;
/**
 * Processes the file tools' own Node program may have at least, whatever HERALD_SANDBOX_MAX_PROCESSES
 * says: its threads (libuv's pool, V8's, the search worker) count as processes, and it runs our
 * code, not the model's. Below about 16 it cannot start.
 */
const FILE_TOOL_PROCESSES = 64;
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

/** The seccomp filters for commands without and with user namespaces; null where the architecture has none. */
interface Filters {
  closed: Buffer | null;
  userNamespaces: Buffer | null;
}

class Bubblewrap implements Sandbox {
  readonly kind = 'bwrap';
  readonly proc: boolean;
  readonly user: SandboxUser;
  readonly #bwrap: string;
  readonly #base: string[];
  readonly #options: SandboxOptions;
  readonly #filters: Filters = {
    closed: seccompFilter(process.arch, { userNamespaces: false }),
    userNamespaces: seccompFilter(process.arch, { userNamespaces: true }),
  };

  constructor(bwrap: string, options: SandboxOptions, proc: boolean) {
    this.proc = proc;
    this.#bwrap = bwrap;
    this.#options = options;
    this.user = sandboxUser(options.settings.user);
    this.#base = baseBwrapArgs({
      readOnlyPaths: options.settings.readOnlyPaths,
      nodePrefix: nodePrefixOf(process.execPath),
      tmpBytes: options.settings.maxFileMb * 1024 * 1024,
      // The same ids inside as outside: what a command sees of its files is what the host sees.
      uid: this.user.uid,
      gid: this.user.gid,
      proc,
    });
  }

  /**
   * A command as bubblewrap starts it: the terminal's limits, the clean environment, the workspace
   * claimed for the sandbox's user, that user's ids and the seccomp filter on descriptor 3. The one
   * way in for a command that runs and returns and for one left running in the background.
   */
  async #spawnSpec(command: BackgroundCommand & { userNamespaces?: boolean }, readOnlyPaths: readonly string[], minProcesses: number): Promise<SpawnSpec> {
    const settings = this.#options.settings;
    const limits = { ...settings, maxProcesses: Math.max(settings.maxProcesses, minProcesses) };
    const [shell, shellArgs] = limitedShell(command.command, limits, command.timeoutMs);
    const nodeBin = join(nodePrefixOf(process.execPath), 'bin');
    const path = SANDBOX_PATH.split(':').includes(nodeBin) ? SANDBOX_PATH : `${SANDBOX_PATH}:${nodeBin}`;
    // bwrap itself gets the clean environment too: the sandbox's PID 1 is a copy of it, and its
    // /proc/1/environ is readable from inside.
    const env = sandboxEnv(this.#options.env, this.#options.settings.env, command.workspace, path);
    await claimWorkspace(command.workspace, this.user);
    const userNamespaces = command.userNamespaces === true;
    const filter = userNamespaces ? this.#filters.userNamespaces : this.#filters.closed;
    return {
      file: this.#bwrap,
      args: [...callBwrapArgs(this.#base, command.workspace, command.network, readOnlyPaths), ...confinementArgs(filter, userNamespaces), '--', shell, ...shellArgs],
      env,
      cwd: command.workspace,
      ...(this.user.switched ? { user: { uid: this.user.uid, gid: this.user.gid } } : {}),
      ...(filter === null ? {} : { fdData: [filter] }),
    };
  }

  async start(command: BackgroundCommand): Promise<ChildProcessWithoutNullStreams> {
    return spawnWithData(await this.#spawnSpec(command, [], 0));
  }

  async run(command: SandboxCommand, extra: { readOnlyPaths?: readonly string[]; input?: string; minProcesses?: number } = {}): Promise<ProcessResult> {
    const { readOnlyPaths = [], input, minProcesses = 0 } = extra;
    return runProcess({
      ...(await this.#spawnSpec(command, readOnlyPaths, minProcesses)),
      timeoutMs: command.timeoutMs,
      outputChars: command.outputChars,
      signal: command.signal,
      namespaced: true,
      ...(input === undefined ? {} : { input, separateErrors: true }),
    });
  }

  /** Under the terminal's identity and seccomp filter (no user namespaces), as every command here. */
  launch(program: SandboxLaunch): LaunchSpec {
    const filter = this.#filters.closed;
    return {
      ...bwrapLaunch(this.#bwrap, this.#base, this.#options, program, confinementArgs(filter, false)),
      prepare: () => claimWorkspace(program.workspace, this.user),
      ...(this.user.switched ? { user: { uid: this.user.uid, gid: this.user.gid } } : {}),
      ...(filter === null ? {} : { fdData: [filter] }),
    };
  }

  /** Through the same shell, so the program gets the terminal's rlimits; no network. */
  runNode(script: SandboxScript): Promise<ProcessResult> {
    const command = ['exec', process.execPath, ...script.nodeArgs].map(shellQuote).join(' ');
    return this.run({ ...script, command, network: false }, { readOnlyPaths: script.readOnlyPaths, input: script.input, minProcesses: FILE_TOOL_PROCESSES });
  }
}

/**
 * The seccomp filter on descriptor 3 (no setuid or setgid bits; no user namespaces unless asked).
 * Where the architecture has no filter, bubblewrap's own --disable-userns still keeps user
 * namespaces off; setuid bits then stay possible, on a nosuid mount in a 0700 workspace.
 */
function confinementArgs(filter: Buffer | null, userNamespaces: boolean): string[] {
  if (filter !== null) return ['--seccomp', '3'];
  return userNamespaces ? [] : ['--unshare-user', '--disable-userns'];
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

  start(command: BackgroundCommand): Promise<ChildProcessWithoutNullStreams> {
    const [shell, shellArgs] = limitedShell(command.command, this.#options.settings, command.timeoutMs);
    const env = sandboxEnv(this.#options.env, this.#options.settings.env, command.workspace);
    return Promise.resolve(spawnWithData({ file: shell, args: shellArgs, env, cwd: command.workspace }));
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

  launch(program: SandboxLaunch): LaunchSpec {
    return unconfinedLaunch(this.#options, program);
  }
}

const HOW_TO_GET_TOOLS = 'install bubblewrap (apt-get install bubblewrap) and allow user namespaces, or set HERALD_SANDBOX=none if one trusted person uses this host';

/**
 * Runs `true` in a real sandbox once: namespaces may be refused by the kernel, seccomp or AppArmor,
 * and a root worker's sandbox user may be refused them or be unable to reach the workspace root.
 */
async function probe(sandbox: Sandbox, workspaceRoot: string | undefined): Promise<string | null> {
  const parent = workspaceRoot ?? tmpdir();
  let workspace: string;
  try {
    await mkdir(parent, { recursive: true });
    workspace = await mkdtemp(join(parent, '.herald-sandbox-probe-'));
  } catch (error) {
    return (error as Error).message;
  }
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
      notice: "HERALD_SANDBOX=none: terminal and file tools run unconfined, as the worker's own user with its files and network; use this only for one trusted person",
    };
  }
  const bwrap = findExecutable('bwrap', options.env.PATH ?? SANDBOX_PATH);
  if (bwrap === null) return { sandbox: null, notice: `terminal and file tools are off: bubblewrap (bwrap) is not installed; ${HOW_TO_GET_TOOLS}` };
  const sandbox = new Bubblewrap(bwrap, options, true);
  const failure = await probe(sandbox, options.workspaceRoot);
  if (failure === null) return { sandbox, notice: filterNotice() };
  // A container's masked /proc makes the kernel refuse a fresh one; everything else may still work.
  const withoutProc = new Bubblewrap(bwrap, options, false);
  if ((await probe(withoutProc, options.workspaceRoot)) === null) {
    return { sandbox: withoutProc, notice: `terminal commands run in a bubblewrap sandbox without /proc (${failure}): the container's /proc is masked; commands like ps have nothing to read` };
  }
  if (sandbox.user.switched) {
    const { uid, gid } = sandbox.user;
    return {
      sandbox: null,
      notice:
        `terminal and file tools are off: the worker runs as root, and bubblewrap cannot create a sandbox as the unprivileged user ${uid}:${gid} ` +
        `(HERALD_SANDBOX_UID/HERALD_SANDBOX_GID) that tool commands run as (${failure}); allow that user to create user namespaces and to reach ` +
        `HERALD_WORKSPACE_ROOT (every parent directory searchable by others), or run the worker as an unprivileged user (the image runs as node)`,
    };
  }
  return { sandbox: null, notice: `terminal and file tools are off: bubblewrap cannot create a sandbox here (${failure}); ${HOW_TO_GET_TOOLS}` };
}

/** Said at start where this architecture has no seccomp filter: setuid bits are not refused there. */
function filterNotice(): string | null {
  if (seccompFilter(process.arch, { userNamespaces: false }) !== null) return null;
  return `terminal commands run in a bubblewrap sandbox without a seccomp filter on ${process.arch}: setuid and setgid bits are not refused (the workspace is still 0700 and mounted nosuid)`;
}

/** A bubblewrap sandbox as openSandbox builds it, without the probe; `proc: false` is the masked-/proc variant. */
export function bubblewrapSandbox(bwrap: string, options: SandboxOptions, proc: boolean): Sandbox {
  return new Bubblewrap(bwrap, options, proc);
}
