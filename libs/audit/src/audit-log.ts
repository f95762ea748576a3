import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { AuditKind, Database } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

/** One fact for the audit trail; written by the transaction that makes the change it records. */
export interface AuditEntry {
  kind: AuditKind;
  /** The person (platform user id), 'api' for the API token, null for Herald itself. */
  actor?: string | null | undefined;
  profileId?: string | null | undefined;
  sessionId?: string | null | undefined;
  turnId?: string | null | undefined;
  /** What it is about: a tool name, a hook name, 'cron:<id>', 'profile:<id>'. */
  subject: string;
  detail?: Record<string, unknown> | undefined;
}

/**
 * A tool call's arguments as the trail keeps them: their SHA-256, so the trail shows which calls
 * were identical without holding what they carried (a command line, a message body, a secret).
 */
export function argumentDigest(args: string): string {
  return `sha256:${createHash('sha256').update(args, 'utf8').digest('hex')}`;
}

/** Appends entries through `executor`: pass the transaction of the change, so both commit or neither. */
export async function appendAudit(executor: Executor, entries: AuditEntry | readonly AuditEntry[]): Promise<void> {
  const rows = (Array.isArray(entries) ? entries : [entries]) as readonly AuditEntry[];
  if (rows.length === 0) return;
  await executor
    .insertInto('audit_log')
    .values(rows.map((entry) => ({ ...auditRow(entry), detail: JSON.stringify(entry.detail ?? {}) })))
    .execute();
}

/** An entry as an audit_log row. */
function auditRow(entry: AuditEntry) {
  return {
    kind: entry.kind,
    actor: entry.actor ?? null,
    profile_id: entry.profileId ?? null,
    session_id: entry.sessionId ?? null,
    turn_id: entry.turnId ?? null,
    subject: entry.subject,
    detail: entry.detail ?? {},
  };
}

/**
 * Entries as the JSON array herald_append_audit takes, for a SQL function that writes a change and
 * its entries in one statement (herald_record_results).
 */
export function auditRowsJson(entries: readonly AuditEntry[]): string {
  return JSON.stringify(entries.map(auditRow));
}

/**
 * Runs `change` and appends what it returns to the trail in one transaction: for admin changes
 * made outside a turn (API routes, the CLI), so a change without its record cannot commit.
 */
export async function withAudit<T>(db: Kysely<Database>, change: (trx: Transaction<Database>) => Promise<{ result: T; audit: AuditEntry | readonly AuditEntry[] }>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { result, audit } = await change(trx);
    await appendAudit(trx, audit);
    return result;
  });
}

/**
 * Runs `change` in one transaction whose writes the admin-change triggers attribute to `actor`
 * (the transaction-local `herald.actor` setting herald_audit_admin_change reads): the API's
 * changes of cron jobs, memory, skill pins and profile documents name `api`, not nobody.
 */
export async function asActor<T>(db: Kysely<Database>, actor: string, change: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('herald.actor', ${actor}, true)`.execute(trx);
    return change(trx);
  });
}

/** Deletes entries older than `days` (the retention sweep); the only delete the trigger lets through. */
export async function pruneAudit(db: Kysely<Database>, days: number): Promise<number> {
  if (days <= 0) return 0;
  const { rows } = await sql<{ removed: string }>`SELECT herald_prune_audit(${days}::integer) AS removed`.execute(db);
  return Number(rows[0]?.removed ?? 0);
}
