import type { Config } from '@herald/core';
import { getFromApi } from './admin-api.ts';

interface QueueRow {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldest_waiting_seconds: number;
}

interface ClusterStatus {
  roles: Record<string, number>;
  queues: QueueRow[];
  oldest_waiting_turn: { event_id: string; session_id: string; waiting_seconds: number } | null;
  dead_letters: Record<string, number>;
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function formatStatus(status: ClusterStatus): string {
  const roles = Object.entries(status.roles)
    .map(([role, count]) => `${role} ${count}`)
    .join('   ');
  const queues = table([
    ['queue', 'waiting', 'active', 'delayed', 'failed', 'oldest waiting'],
    ...status.queues.map((q) => [q.queue, String(q.waiting), String(q.active), String(q.delayed), String(q.failed), `${q.oldest_waiting_seconds} s`]),
  ]);
  const oldest = status.oldest_waiting_turn
    ? `event ${status.oldest_waiting_turn.event_id} (session ${status.oldest_waiting_turn.session_id}), waiting ${status.oldest_waiting_turn.waiting_seconds} s`
    : 'none';
  const dead = Object.entries(status.dead_letters)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  return `roles alive:  ${roles}\n\n${queues}\n\noldest waiting turn: ${oldest}\ndead letters: ${dead}\n`;
}

/** `herald status [--json]`: asks the API (HERALD_URL, HERALD_API_TOKEN); returns the exit code. */
export async function runStatus(args: string[], config: Config): Promise<number> {
  const unknown = args.filter((arg) => arg !== '--json');
  if (unknown.length > 0) {
    process.stderr.write(`herald status: unknown option ${unknown[0]} (usage: herald status [--json])\n`);
    return 2;
  }
  const status = await getFromApi<ClusterStatus>(config, '/v1/admin/status', 'status');
  if (typeof status === 'number') return status;
  process.stdout.write(args.includes('--json') ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  return 0;
}
