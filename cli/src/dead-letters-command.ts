import type { Config } from '@herald/core';
import { getFromApi } from './admin-api.ts';
import { table } from './status-command.ts';

interface DeadLetter {
  kind: string;
  id: string;
  reason: string;
  failures: number;
  session_id: string | null;
  failed_at: string;
}

export const DEAD_LETTERS_USAGE = 'usage: herald dead-letters [--json] [--limit N]';

/** One line per dead letter, newest first; the reason cut to one line of a terminal's width. */
export function formatDeadLetters(letters: readonly DeadLetter[]): string {
  if (letters.length === 0) return 'no dead letters\n';
  const rows = letters.map((letter) => [letter.failed_at, letter.kind, letter.id, String(letter.failures), letter.reason.replace(/\s+/g, ' ').slice(0, 100)]);
  return `${table([['failed at', 'kind', 'id', 'failures', 'reason'], ...rows])}\n`;
}

/** `herald dead-letters`: what failed for good and why, through the API (GET /v1/admin/dead-letters). */
export async function runDeadLetters(args: string[], config: Config): Promise<number> {
  let limit = 100;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--json') continue;
    if (arg === '--limit' && /^\d{1,4}$/.test(args[i + 1] ?? '')) {
      limit = Number(args[++i]);
      continue;
    }
    process.stderr.write(`herald dead-letters: unexpected argument ${arg} (${DEAD_LETTERS_USAGE})\n`);
    return 2;
  }
  const body = await getFromApi<{ dead_letters: DeadLetter[] }>(config, `/v1/admin/dead-letters?limit=${limit}`, 'dead-letters');
  if (typeof body === 'number') return body;
  process.stdout.write(args.includes('--json') ? `${JSON.stringify(body.dead_letters, null, 2)}\n` : formatDeadLetters(body.dead_letters));
  return 0;
}
