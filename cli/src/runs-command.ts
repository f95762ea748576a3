import type { Config } from '@herald/core';
import { table } from './status-command.ts';

interface RunRow {
  id: string;
  parent_session_id: string;
  task_index: number;
  goal: string;
  role: string;
  background: boolean;
  status: string;
  exit_reason: string | null;
  created_at: string;
}

export const RUNS_USAGE = 'usage: herald runs [list [--session ID] [--status S] [--json]] | show RUN_ID | cancel RUN_ID|PARENT_TURN_ID';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One request to the API (HERALD_URL, HERALD_API_TOKEN): the JSON body, or the exit code after saying why. */
async function callApi(config: Config, method: 'GET' | 'POST', path: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${config.api.url}${path}`, {
      method,
      headers: {
        ...(config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` }),
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { body: '{}' } : {}),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    process.stderr.write(`herald runs: cannot reach the API at ${config.api.url} (${(error as Error).message}); set HERALD_URL\n`);
    return 1;
  }
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!response.ok) {
    process.stderr.write(`herald runs: ${body.error?.message ?? `the API answered ${response.status}`}${response.status === 401 ? ' (set HERALD_API_TOKEN)' : ''}\n`);
    return 1;
  }
  return body;
}

export function formatRuns(runs: readonly RunRow[]): string {
  if (runs.length === 0) return 'no runs\n';
  const rows = runs.map((run) => [
    run.created_at,
    run.id,
    run.parent_session_id,
    String(run.task_index),
    run.background ? 'background' : run.role,
    run.exit_reason === null ? run.status : `${run.status} (${run.exit_reason})`,
    run.goal.replace(/\s+/g, ' ').slice(0, 60),
  ]);
  return `${table([['created', 'run', 'parent session', 'task', 'kind', 'status', 'goal'], ...rows])}\n`;
}

function listPath(args: string[]): string | undefined {
  const params = new URLSearchParams();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--json') continue;
    const value = args[i + 1];
    if ((arg === '--session' || arg === '--status') && value !== undefined) {
      params.set(arg === '--session' ? 'session_id' : 'status', value);
      i++;
      continue;
    }
    return undefined;
  }
  const query = params.toString();
  return `/v1/runs${query === '' ? '' : `?${query}`}`;
}

/** `herald runs`: delegate_task's child runs through the API (list, show, cancel). */
export async function runRuns(args: string[], config: Config): Promise<number> {
  const [action = 'list', ...rest] = args;
  const json = rest.includes('--json');
  if (action === 'list' || action.startsWith('--')) {
    const path = listPath(action === 'list' ? rest : args);
    if (path === undefined) return usage();
    const body = await callApi(config, 'GET', path);
    if (typeof body === 'number') return body;
    const runs = (body as { runs: RunRow[] }).runs;
    process.stdout.write(json || args.includes('--json') ? `${JSON.stringify(runs, null, 2)}\n` : formatRuns(runs));
    return 0;
  }
  const id = rest[0];
  if ((action !== 'show' && action !== 'cancel') || id === undefined || !UUID.test(id)) return usage();
  const body = await callApi(config, action === 'show' ? 'GET' : 'POST', action === 'show' ? `/v1/runs/${id}` : `/v1/runs/${id}/cancel`);
  if (typeof body === 'number') return body;
  if (action === 'show') process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else {
    const cancelled = (body as { cancelled: string[] }).cancelled;
    process.stdout.write(cancelled.length === 0 ? 'nothing to cancel: the runs had ended\n' : `cancelled ${cancelled.length} run${cancelled.length === 1 ? '' : 's'}: ${cancelled.join(', ')}\n`);
  }
  return 0;
}

function usage(): number {
  process.stderr.write(`herald runs: ${RUNS_USAGE}\n`);
  return 2;
}
