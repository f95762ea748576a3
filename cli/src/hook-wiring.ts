import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config, Logger } from '@herald/core';
import type { Db, ProfileCache } from '@herald/db';
import { HookRegistry, Hooks, HooksFileError } from '@herald/hooks';
import type { CommandRunner } from '@herald/hooks';
import type { SandboxChoice } from '@herald/tools';

/** Single-quoted for the sandbox's shell: nothing inside is expanded. */
function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * Command hooks run in the same bubblewrap sandbox as terminal commands: no platform secrets, no
 * network, a scratch directory as the only writable place. The event reaches stdin through a
 * quoted printf, so its text is never parsed by the shell. The sandbox is opened on first use.
 */
export function sandboxCommands(open: () => Promise<SandboxChoice>, outputChars = 64 * 1024): CommandRunner {
  let choice: Promise<SandboxChoice> | undefined;
  return {
    async run(argv, stdin, timeoutMs, signal) {
      choice ??= open();
      const { sandbox, notice } = await choice;
      if (sandbox === null) throw new Error(`no sandbox for command hooks: ${notice}`);
      const workspace = await mkdtemp(join(tmpdir(), 'herald-hook-'));
      try {
        const command = `printf '%s' ${quote(stdin)} | ${argv.map(quote).join(' ')}`;
        const result = await sandbox.run({ command, workspace, network: false, timeoutMs, outputChars, signal });
        if (result.timedOut) throw new Error(`timed out after ${timeoutMs} ms`);
        return { exitCode: result.exitCode, stdout: result.output };
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The hooks of a role that fires events: HERALD_HOOKS_FILE validated and its modules loaded now, so
 * a bad file stops the start with the reason (HooksFileError), before the role takes any work.
 */
export async function loadHooks(config: Config, logger: Logger, db: Db, profiles: ProfileCache, commands: CommandRunner | null): Promise<Hooks> {
  const registry = config.hooks.file === undefined ? HookRegistry.empty() : await HookRegistry.fromFile(config.hooks.file);
  if (registry.hasKind('url') && config.hooks.secret === undefined) {
    throw new HooksFileError('HERALD_HOOKS_SECRET: required when HERALD_HOOKS_FILE has a url hook (its events are signed with it), it is not set');
  }
  if (config.hooks.file !== undefined) logger.info({ hooksFile: config.hooks.file }, 'lifecycle hooks loaded');
  return new Hooks({ registry, db, logger: logger.child({ component: 'hooks' }), commands, profiles });
}
