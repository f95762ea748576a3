import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';

export const AUDIT_USAGE = `herald audit [options]      the audit trail through the API (GET /v1/audit), newest first
  --person ID      entries by this person (or 'api' for changes made with the API token)
  --session ID     entries of this session
  --kind K         tool_call, approval_request, approval_answer, hook_decision, admin_change, refusal
  --from DATE      from this date (ISO, inclusive)
  --to DATE        until this date (ISO, exclusive)
  --limit N        entries per page (default 100, at most 500)
  --before CURSOR  the page after the one that printed this cursor
  --json           print the API's JSON answer`;

interface AuditAnswer {
  entries?: { id: string; at: string; kind: string; actor: string | null; session_id: string | null; subject: string; detail: Record<string, unknown> }[];
  next?: string | null;
  error?: { message: string };
}

/** One line per entry: when, what, who, about what, and the detail as compact JSON. */
export function formatAudit(answer: AuditAnswer): string {
  const lines = (answer.entries ?? []).map(
    (entry) => `${entry.at.slice(0, 19).replace('T', ' ')}  #${entry.id}  ${entry.kind}  ${entry.actor ?? '-'}  ${entry.subject}  ${JSON.stringify(entry.detail)}`,
  );
  if (lines.length === 0) lines.push('no audit entries match');
  if (answer.next) lines.push(`more: herald audit --before ${answer.next} (with the same filters)`);
  return `${lines.join('\n')}\n`;
}

/** `herald audit`: read-only, like the API: there is no command that changes the trail. */
export async function runAudit(argv: string[], config: Config): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      person: { type: 'string' },
      session: { type: 'string' },
      kind: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'string' },
      before: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${AUDIT_USAGE}\n`);
    return;
  }
  const params = new URLSearchParams();
  const optional: [string, string | undefined][] = [
    ['person', values.person],
    ['session_id', values.session],
    ['kind', values.kind],
    ['from', values.from],
    ['to', values.to],
    ['limit', values.limit],
    ['before', values.before],
  ];
  for (const [key, value] of optional) if (value !== undefined) params.set(key, value);
  const response = await fetch(`${config.api.url}/v1/audit?${params.toString()}`, {
    headers: config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` },
  });
  const body = (await response.json()) as AuditAnswer;
  if (!response.ok) {
    process.stderr.write(`herald: audit failed (${response.status}): ${body.error?.message ?? 'unexpected answer'}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(values.json ? `${JSON.stringify(body, null, 2)}\n` : formatAudit(body));
}
