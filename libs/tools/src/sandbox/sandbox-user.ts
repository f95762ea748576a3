import { lchown, lstat } from 'node:fs/promises';

/** Who tool commands run as, on the host and inside the sandbox alike. */
export interface SandboxUser {
  uid: number;
  gid: number;
  /** True when the worker is root and switches to this user for every command. */
  switched: boolean;
}

/**
 * A worker running as root runs commands as the configured unprivileged user (HERALD_SANDBOX_UID
 * and _GID): mapped to root outside, a file a command made setuid would be a root shell for every
 * account on the host, and the kernel does not apply the process limit to root. A worker that is
 * not root cannot switch, and runs them as itself.
 */
export function sandboxUser(configured: { uid: number; gid: number }): SandboxUser {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  if (uid === 0) return { ...configured, switched: true };
  return { uid, gid, switched: false };
}

/** Gives the session's workspace (0700 already) to the sandbox's user, so its commands can write there and no one else can look in. */
export async function claimWorkspace(workspace: string, user: SandboxUser): Promise<void> {
  if (!user.switched) return;
  const info = await lstat(workspace);
  if (!info.isDirectory()) throw new Error(`the workspace ${workspace} is not a directory`);
  // lchown: were the directory swapped for a link meanwhile, the link changes owner, never its target.
  if (info.uid !== user.uid || info.gid !== user.gid) await lchown(workspace, user.uid, user.gid);
}
