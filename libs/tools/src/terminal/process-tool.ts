import { z } from 'zod';
import type { BackgroundProcesses } from './background-processes.ts';
import type { BackgroundProcess } from './background-processes.ts';
import { checkCommand } from '../command-guard/command-guard.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import { defineTool } from '../shared/tool.ts';
import type { CallContext, Tool } from '../shared/tool.ts';
import { ensureWorkspace } from '../files/workspace-paths.ts';

const ACTIONS = ['start', 'list', 'poll', 'log', 'wait', 'kill', 'write', 'submit', 'close'] as const;
/** Longest a `wait` holds the turn; longer waits come back with the output so far. */
export const PROCESS_WAIT_MAX_S = 300;
const POLL_CHARS = 20_000;
const LOG_DEFAULT_LINES = 200;

export interface ProcessToolOptions {
  sandbox: Sandbox | null;
  unavailable?: string;
  network?: boolean;
  processes: BackgroundProcesses | null;
}

const schema = z.object({
  action: z.enum(ACTIONS),
  command: z.string().min(1).max(100_000).optional().describe('start: the shell command (bash -c)'),
  notify_on_exit: z.boolean().optional().describe('start: when it ends, you get a new turn with its exit code and output tail'),
  notify_on_complete: z.boolean().optional(),
  session_id: z.string().max(64).optional().describe('The id start returned'),
  data: z.string().max(100_000).optional().describe('write: raw text to stdin; submit: a line (Enter added)'),
  timeout: z.number().int().min(1).optional().describe(`wait: seconds, at most ${PROCESS_WAIT_MAX_S}`),
  offset: z.number().int().min(0).optional().describe('log: first line'),
  limit: z.number().int().min(1).max(5000).optional().describe(`log: lines (default the last ${LOG_DEFAULT_LINES})`),
});
type Args = z.infer<typeof schema>;

function view(entry: BackgroundProcess) {
  return {
    session_id: entry.id,
    command: entry.command.slice(0, 200),
    status: entry.status,
    pid: entry.pid,
    started_at: entry.startedAt.toISOString(),
    uptime_seconds: Math.round((Date.now() - entry.startedAt.getTime()) / 1000),
    exit_code: entry.exitCode,
    ...(entry.signal ? { signal: entry.signal } : {}),
    ...(entry.endReason ? { ended_because: entry.endReason } : {}),
  };
}

/** New output since the last poll, capped to its newest part. */
function pollOutput(entry: BackgroundProcess): { output: string; note?: string } {
  const { text, lost } = entry.output.since(entry.polled);
  entry.polled = entry.output.end;
  const shown = text.length > POLL_CHARS ? text.slice(-POLL_CHARS) : text;
  const skipped = lost + text.length - shown.length;
  return skipped > 0 ? { output: shown, note: `${skipped} earlier characters not shown` } : { output: shown };
}

function logLines(entry: BackgroundProcess, args: Args) {
  const lines = entry.output.text().split('\n');
  const limit = args.limit ?? LOG_DEFAULT_LINES;
  const offset = args.offset ?? Math.max(0, lines.length - limit);
  return { total_lines: lines.length, offset, output: lines.slice(offset, offset + limit).join('\n') };
}

async function waitFor(entry: BackgroundProcess, args: Args, signal: AbortSignal) {
  const seconds = Math.min(args.timeout ?? 30, PROCESS_WAIT_MAX_S);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    entry.exited.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), seconds * 1000))),
    new Promise<boolean>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
  ]).finally(() => clearTimeout(timer));
  return { ...view(entry), timed_out: timedOut, ...pollOutput(entry) };
}

function stdinAction(entry: BackgroundProcess, args: Args) {
  if (entry.status !== 'running') throw new Error(`process ${entry.id} has ended (${entry.status}); its stdin is closed`);
  const stdin = entry.child.stdin;
  if (args.action === 'close') {
    stdin.end();
    return { session_id: entry.id, stdin: 'closed' };
  }
  if (stdin.writableEnded) throw new Error(`the stdin of ${entry.id} was closed`);
  const data = args.data ?? '';
  stdin.write(args.action === 'submit' ? `${data}\n` : data);
  return { session_id: entry.id, written: data.length + (args.action === 'submit' ? 1 : 0) };
}

async function act(args: Args, context: CallContext, options: ProcessToolOptions, processes: BackgroundProcesses): Promise<unknown> {
  if (args.action === 'start') {
    if (options.sandbox === null) throw new Error(options.unavailable ?? 'no sandbox');
    if (args.command === undefined) throw new Error('start needs a command');
    const workspace = await ensureWorkspace(context.workspaceDir);
    const entry = await processes.start(options.sandbox, {
      sessionId: context.sessionId,
      userId: context.userId,
      command: args.command,
      workspace,
      network: options.network === true,
      notifyOnExit: args.notify_on_exit === true || args.notify_on_complete === true,
    });
    return { ...view(entry), notify_on_exit: entry.notifyOnExit };
  }
  if (args.action === 'list') return { processes: processes.list(context.sessionId).map(view) };
  if (args.session_id === undefined) throw new Error(`session_id is required for ${args.action}; process list shows them`);
  const entry =
    processes.get(context.sessionId, args.session_id) ??
    (() => {
      throw new Error(`no process ${args.session_id} in this session; process list shows them`);
    })();
  switch (args.action) {
    case 'poll':
      return { ...view(entry), ...pollOutput(entry) };
    case 'log':
      return { ...view(entry), ...logLines(entry, args) };
    case 'wait':
      return waitFor(entry, args, context.signal);
    case 'kill':
      await processes.kill(entry);
      return view(entry);
    default:
      return stdinAction(entry, args);
  }
}

/** Hermes' `process`: background commands in the session's sandbox that outlive the turn. */
export function createProcessTool(options: ProcessToolOptions): Tool {
  const { processes } = options;
  const unavailable = options.sandbox === null ? (options.unavailable ?? 'no sandbox') : processes === null ? 'background processes run on workers only' : undefined;
  return defineTool({
    name: 'process',
    toolset: 'terminal',
    description: 'Background commands in your workspace that outlive this turn: start, list, poll (new output), log, wait (until exit or timeout), ' + 'write/submit/close (stdin), kill.',
    guidance: '',
    schema,
    ...(unavailable === undefined ? {} : { unavailable }),
    replaySafe: false,
    refuse(args) {
      if (args.action !== 'start' || args.command === undefined) return null;
      const check = checkCommand(args.command);
      return check.verdict === 'hardline' ? `Refused: this command ${check.description} (${check.patternKey}). It is never allowed.` : null;
    },
    needsApproval(args) {
      if (args.action !== 'start' || args.command === undefined) return null;
      const check = checkCommand(args.command);
      if (check.verdict !== 'dangerous') return null;
      return { patternKey: check.patternKey!, reason: `This command ${check.description} (${check.patternKey}).` };
    },
    async execute(args, context) {
      if (processes === null || unavailable !== undefined) throw new Error(unavailable ?? 'no background processes here');
      return JSON.stringify(await act(args, context, options, processes));
    },
  });
}
