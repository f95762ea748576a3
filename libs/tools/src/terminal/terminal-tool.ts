import { z } from 'zod';
import { checkCommand } from '../command-guard/command-guard.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { BackgroundProcesses } from './background-processes.ts';
import { defineTool } from '../shared/tool.ts';
import type { Tool } from '../shared/tool.ts';
import { ensureWorkspace } from '../files/workspace-paths.ts';

export const TERMINAL_DEFAULT_TIMEOUT_S = 60;

export interface TerminalToolOptions {
  /** Where commands run; null: none could be had here, and the tool is not offered (`unavailable`). */
  sandbox: Sandbox | null;
  /** Why the tool is not offered when there is no sandbox; the worker's start notice says it too. */
  unavailable?: string;
  /** Whether commands get the network (HERALD_SANDBOX_NETWORK names the terminal toolset). */
  network?: boolean;
  /** Whether commands may create user namespaces (HERALD_SANDBOX_USERNS names the terminal toolset). */
  userNamespaces?: boolean;
  /** Longest a command may run (HERALD_TERMINAL_MAX_TIMEOUT_MS). */
  maxTimeoutMs?: number;
  /** Output kept for the model; longer output keeps its head and tail (HERALD_TERMINAL_OUTPUT_CHARS). */
  outputChars?: number;
  /** Hermes' `background: true` starts the command as a `process` (null: not on this worker). */
  processes?: BackgroundProcesses | null;
}

/** Hermes' terminal(background=true): the same start as process(action=start), the same answer. */
async function startInBackground(
  options: TerminalToolOptions,
  sandbox: Sandbox,
  args: { command: string; notify_on_complete?: boolean | undefined; workspace: string },
  context: { sessionId: string; userId: string },
): Promise<string> {
  if (!options.processes) throw new Error('background processes are not available here; run the command in the foreground');
  const entry = await options.processes.start(sandbox, {
    sessionId: context.sessionId,
    userId: context.userId,
    command: args.command,
    workspace: args.workspace,
    network: options.network === true,
    notifyOnExit: args.notify_on_complete === true,
  });
  return JSON.stringify({ session_id: entry.id, pid: entry.pid, status: entry.status, notify_on_exit: entry.notifyOnExit });
}

export function createTerminalTool(options: TerminalToolOptions): Tool {
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const outputChars = options.outputChars ?? 50_000;
  const { sandbox } = options;
  const maxTimeoutS = Math.max(1, Math.floor(maxTimeoutMs / 1000));
  const schema = z.object({
    command: z.string().min(1).max(100_000).describe('The shell command (bash -c)'),
    timeout: z.number().int().min(1).optional().describe(`Seconds before the command is killed (default ${TERMINAL_DEFAULT_TIMEOUT_S}, at most ${maxTimeoutS})`),
    background: z.boolean().optional(),
    notify_on_complete: z.boolean().optional(),
  });
  return defineTool({
    name: 'terminal',
    toolset: 'terminal',
    description: 'Run a shell command in your workspace (no stdin). Returns stdout/stderr and the exit code; long output keeps its start and end.',
    guidance: `terminal commands run in the workspace${options.network === true ? '' : ' without network access'}, are killed at the timeout with any processes they started, and destructive ones need the person's approval or are refused.`,
    schema,
    ...(sandbox === null ? { unavailable: options.unavailable ?? 'no sandbox' } : {}),
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
      // Offered only with a sandbox; the gate never runs a tool that is not offered.
      if (sandbox === null) throw new Error(options.unavailable ?? 'no sandbox');
      const workspace = await ensureWorkspace(context.workspaceDir);
      if (args.background === true) return startInBackground(options, sandbox, { ...args, workspace }, context);
      const requested = args.timeout ?? TERMINAL_DEFAULT_TIMEOUT_S;
      const seconds = Math.min(requested, maxTimeoutS);
      const result = await sandbox.run({
        command: args.command,
        workspace,
        network: options.network === true,
        userNamespaces: options.userNamespaces === true,
        timeoutMs: seconds * 1000,
        outputChars,
        signal: context.signal,
      });
      const notes: string[] = [];
      if (args.timeout !== undefined && requested > seconds) notes.push(`timeout lowered to the ${maxTimeoutS} s maximum`);
      if (result.timedOut) notes.push(`timed out after ${seconds} s; the command and its child processes were killed`);
      const status = result.exitCode !== null ? `exit code: ${result.exitCode}` : `killed by ${result.signal ?? 'signal'}`;
      const output = result.output === '' ? '(no output)' : result.output.replace(/\n$/, '');
      return `${output}\n[${[status, ...notes].join('; ')}]`;
    },
  });
}
