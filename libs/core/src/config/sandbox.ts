import type { z } from 'zod';
import { commaList, integer, oneOf } from './fields.ts';

/** How terminal and file tools are confined (docs/security.md, "Tool sandbox"). */
export interface SandboxConfig {
  /** bwrap: bubblewrap namespaces (the default); none: unconfined, for one trusted person on a laptop. */
  mode: 'bwrap' | 'none';
  /** Names of worker environment variables an operator grants to tool commands; nothing else is passed. */
  env: string[];
  /** Toolsets whose sandboxed commands get the network; the others run without one. */
  networkToolsets: string[];
  /** Toolsets whose sandboxed commands may create user namespaces (`unshare -r`, rootless containers); off for the others. */
  userNamespaceToolsets: string[];
  /**
   * The unprivileged uid and gid tool commands run as, outside the sandbox and inside, when the
   * worker runs as root (a worker that is not root runs them as itself: it cannot switch).
   */
  user: { uid: number; gid: number };
  /** Extra host directories visible read-only inside the sandbox (toolchains outside /usr, say). */
  readOnlyPaths: string[];
  memoryMb: number;
  maxProcesses: number;
  /** Largest file a command may write, and the size of its private /tmp. */
  maxFileMb: number;
}

export const sandboxSchema = {
  HERALD_SANDBOX: oneOf(['bwrap', 'none']).default('bwrap'),
  HERALD_SANDBOX_ENV: commaList.refine((list) => list.every((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)), {
    error: 'expected environment variable names separated by commas',
  }),
  HERALD_SANDBOX_NETWORK: commaList,
  HERALD_SANDBOX_USERNS: commaList,
  // Outside every range a distribution or systemd hands out (60578-61183 is unallocated in
  // systemd's map), so no account or service of the host shares it. Never 0.
  HERALD_SANDBOX_UID: integer(1, 4_294_967_294).default(61_000),
  HERALD_SANDBOX_GID: integer(1, 4_294_967_294).default(61_000),
  HERALD_SANDBOX_READONLY_PATHS: commaList.refine((list) => list.every((path) => path.startsWith('/')), {
    error: 'expected absolute paths separated by commas',
  }),
  HERALD_SANDBOX_MEMORY_MB: integer(64, 1_048_576).default(2048),
  HERALD_SANDBOX_MAX_PROCESSES: integer(8, 1_000_000).default(256),
  HERALD_SANDBOX_MAX_FILE_MB: integer(1, 1_048_576).default(1024),
};

type SandboxEnv = { [K in keyof typeof sandboxSchema]: z.output<(typeof sandboxSchema)[K]> };

/**
 * The platform's own settings (every variable Herald reads, HERALD_* and the rest) are never
 * granted to tools, whatever HERALD_SANDBOX_ENV says: they are the secrets the sandbox keeps away.
 */
export function refusedGrants(granted: readonly string[], settingNames: readonly string[]): string[] {
  return granted.filter((name) => settingNames.includes(name) || /^HERALD_/.test(name));
}

export function sandboxConfig(e: SandboxEnv): SandboxConfig {
  return {
    mode: e.HERALD_SANDBOX,
    env: e.HERALD_SANDBOX_ENV,
    networkToolsets: e.HERALD_SANDBOX_NETWORK,
    userNamespaceToolsets: e.HERALD_SANDBOX_USERNS,
    user: { uid: e.HERALD_SANDBOX_UID, gid: e.HERALD_SANDBOX_GID },
    readOnlyPaths: e.HERALD_SANDBOX_READONLY_PATHS,
    memoryMb: e.HERALD_SANDBOX_MEMORY_MB,
    maxProcesses: e.HERALD_SANDBOX_MAX_PROCESSES,
    maxFileMb: e.HERALD_SANDBOX_MAX_FILE_MB,
  };
}
