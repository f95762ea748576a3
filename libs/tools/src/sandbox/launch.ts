import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SandboxConfig } from '@herald/core';
import type { SpawnSpec } from '../terminal/process-run.ts';
import { callBwrapArgs, nodePrefixOf } from './bwrap-args.ts';
import { SANDBOX_PATH, sandboxEnv } from './sandbox-env.ts';

/** A long-running program (an MCP server) to start in the sandbox and talk to over its stdin and stdout. */
export interface SandboxLaunch {
  command: string;
  args: readonly string[];
  /** Names of worker variables the program gets (an MCP server's env_from); nothing else is passed. */
  granted: readonly string[];
  workspace: string;
  /** Where it starts, inside the workspace; the workspace when not given. */
  cwd?: string | undefined;
  network: boolean;
}

/**
 * What to spawn: the program wrapped so that it is confined (its identity and filter included) and
 * dies with the worker; `prepare` (the workspace claimed for the sandbox's user) runs first.
 */
export type LaunchSpec = SpawnSpec & { prepare?: () => Promise<void> };

/** What a launch reads of the sandbox's options (sandbox.ts SandboxOptions). */
interface SandboxOptions {
  settings: SandboxConfig;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The terminal's resource limits, except CPU time: a server lives for many calls, each of which
 * has its own timeout instead. A limit above the inherited hard one is left as it is (stricter).
 */
function limitsThenExec(options: SandboxOptions): [string, string[]] {
  const bash = existsSync('/bin/bash');
  const { settings } = options;
  const limits = ['ulimit -c 0', `ulimit -d ${settings.memoryMb * 1024}`, `ulimit -f ${settings.maxFileMb * (bash ? 1024 : 2048)}`, ...(bash ? [`ulimit -u ${settings.maxProcesses}`] : [])];
  const shell = bash ? '/bin/bash' : '/bin/sh';
  return [shell, ['-c', `{ ${limits.join('; ')}; } 2>/dev/null; exec "$@"`, shell]];
}

function sandboxPath(): string {
  const nodeBin = join(nodePrefixOf(process.execPath), 'bin');
  return SANDBOX_PATH.split(':').includes(nodeBin) ? SANDBOX_PATH : `${SANDBOX_PATH}:${nodeBin}`;
}

function startDir(program: SandboxLaunch): string {
  return program.cwd === undefined ? program.workspace : resolve(program.workspace, program.cwd);
}

/**
 * Inside bubblewrap: the terminal's namespaces and mounts, the workspace the only writable place,
 * the network only when granted; `--die-with-parent` (in the base arguments) ends the whole
 * sandbox, server and children, when the worker dies, even by SIGKILL.
 */
export function bwrapLaunch(bwrap: string, base: readonly string[], options: SandboxOptions, program: SandboxLaunch, confinement: readonly string[]): LaunchSpec {
  const [shell, shellArgs] = limitsThenExec(options);
  const cwd = startDir(program);
  const args = callBwrapArgs(base, program.workspace, program.network);
  // callBwrapArgs starts the program in the workspace; a cwd inside it replaces that.
  const chdir = args.indexOf('--chdir');
  if (chdir >= 0) args[chdir + 1] = cwd;
  return {
    file: bwrap,
    args: [...args, ...confinement, '--', shell, ...shellArgs, program.command, ...program.args],
    env: sandboxEnv(options.env, program.granted, program.workspace, sandboxPath()),
    cwd,
  };
}

/** Found once: setpriv sets the parent-death signal that outlives exec. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/**
 * HERALD_SANDBOX=none: no namespaces (as for the terminal), but the same clean environment, and
 * PR_SET_PDEATHSIG through setpriv so a SIGKILLed worker still takes its server with it.
 */
export function unconfinedLaunch(options: SandboxOptions, program: SandboxLaunch): LaunchSpec {
  const [shell, shellArgs] = limitsThenExec(options);
  const wrapped = [shell, ...shellArgs, program.command, ...program.args];
  const [file, ...args] = SETPRIV === undefined ? wrapped : [SETPRIV, '--pdeathsig', 'KILL', '--', ...wrapped];
  return {
    file: file as string,
    args,
    env: sandboxEnv(options.env, program.granted, program.workspace, sandboxPath()),
    cwd: startDir(program),
  };
}
