import type { Db, SubagentExitReason } from '@herald/db';
import { firstReply, sessionModelUsage, toolExchanges } from '@herald/session';
import type { SubagentRun } from '@herald/subagents';

/** One child's result, in Hermes' shape (../shared/reference/hermes.md §10). */
export interface ChildResult {
  task_index: number;
  run_id: string;
  /** 'refused': the person's limits stopped the child (before it started, or before a model call); not an error. */
  status: 'ok' | 'error' | 'timeout' | 'interrupted' | 'refused';
  summary: string;
  api_calls: number;
  duration_seconds: number;
  model: string | null;
  exit_reason: SubagentExitReason;
  tokens: { input: number; output: number };
  tool_trace: { tool: string; args_bytes: number; result_bytes: number; status: 'ok' | 'error' }[];
}

/** Hermes' summary floor: however large the batch, each child keeps at least this much of its report. */
export const SUMMARY_FLOOR_CHARS = 2000;

const STATUS: Record<SubagentExitReason, ChildResult['status']> = {
  completed: 'ok',
  max_iterations: 'error',
  error: 'error',
  interrupted: 'interrupted',
  timeout: 'timeout',
  refused: 'refused',
};

// The gate's and the loop's error results start with these (tool-gate.ts, tool-loop.ts).
const ERROR_PREFIXES = ['BLOCKED', "Tool '", 'Invalid arguments', 'Interrupted, outcome unknown'];

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Cuts a report to `budget` characters, keeping its head and tail and saying where the rest is. */
export function budgetSummary(text: string, budget: number, runId: string): string {
  if (text.length <= budget) return text;
  const marker = `\n[… ${text.length - budget} characters omitted; the whole report: GET /v1/runs/${runId} or herald runs show ${runId}]\n`;
  const keep = Math.max(0, budget - marker.length);
  const head = Math.ceil(keep * 0.7);
  return `${text.slice(0, head)}${marker}${text.slice(text.length - (keep - head))}`;
}

async function usageOf(db: Db, sessionId: string): Promise<{ calls: number; input: number; output: number; model: string | null }> {
  return sessionModelUsage(db, sessionId);
}

async function traceOf(db: Db, sessionId: string): Promise<ChildResult['tool_trace']> {
  const rows = await toolExchanges(db, sessionId);
  const argsBytes = new Map<string, number>();
  for (const row of rows) for (const call of row.tool_calls ?? []) argsBytes.set(call.id, bytes(call.arguments));
  return rows
    .filter((row) => row.role === 'tool')
    .map((row) => ({
      tool: row.tool_name ?? '',
      args_bytes: argsBytes.get(row.tool_call_id ?? '') ?? 0,
      result_bytes: bytes(row.content),
      status: ERROR_PREFIXES.some((prefix) => row.content.startsWith(prefix)) ? ('error' as const) : ('ok' as const),
    }));
}

/** The results of finished runs, each report within its share of `maxSummaryChars`. */
export async function childResults(db: Db, runs: SubagentRun[], maxSummaryChars: number): Promise<ChildResult[]> {
  const budget = Math.min(maxSummaryChars, Math.max(SUMMARY_FLOOR_CHARS, Math.floor(maxSummaryChars / Math.max(1, runs.length))));
  return Promise.all(
    runs.map(async (run): Promise<ChildResult> => {
      const reply = await firstReply(db, run.childSessionId);
      const usage = await usageOf(db, run.childSessionId);
      const exit = run.exitReason ?? 'interrupted';
      const started = run.startedAt ?? run.createdAt;
      const ended = run.finishedAt ?? new Date();
      return {
        task_index: run.taskIndex,
        run_id: run.id,
        status: STATUS[exit],
        summary: run.refusal ?? budgetSummary(reply ?? '', budget, run.id),
        api_calls: usage.calls,
        duration_seconds: Math.max(0, Math.round((ended.getTime() - started.getTime()) / 10) / 100),
        model: usage.model,
        exit_reason: exit,
        tokens: { input: usage.input, output: usage.output },
        tool_trace: await traceOf(db, run.childSessionId),
      };
    }),
  );
}
