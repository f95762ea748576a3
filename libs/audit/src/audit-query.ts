import type { Kysely } from 'kysely';
import type { AuditKind, Database } from '@herald/db';

export interface AuditFilter {
  person?: string | undefined;
  sessionId?: string | undefined;
  kind?: AuditKind | undefined;
  /** Inclusive lower and exclusive upper bound on the entry's time. */
  since?: Date | undefined;
  until?: Date | undefined;
  /** Keyset cursor: entries older than this id (the `next` of the previous page). */
  before?: string | undefined;
  limit: number;
}

export interface AuditView {
  id: string;
  at: Date;
  kind: AuditKind;
  actor: string | null;
  profileId: string | null;
  sessionId: string | null;
  turnId: string | null;
  subject: string;
  detail: Record<string, unknown>;
}

export interface AuditPage {
  entries: AuditView[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next: string | null;
}

/** Newest first, keyset paged on the id: a page never shifts when entries are appended meanwhile. */
export async function listAudit(db: Kysely<Database>, filter: AuditFilter): Promise<AuditPage> {
  let query = db
    .selectFrom('audit_log')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(filter.limit + 1);
  if (filter.person !== undefined) query = query.where('actor', '=', filter.person);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
  if (filter.until !== undefined) query = query.where('at', '<', filter.until);
  if (filter.before !== undefined) query = query.where('id', '<', filter.before);
  const rows = await query.execute();
  const page = rows.slice(0, filter.limit);
  return {
    entries: page.map((row) => ({
      id: String(row.id),
      at: row.at,
      kind: row.kind,
      actor: row.actor,
      profileId: row.profile_id,
      sessionId: row.session_id,
      turnId: row.turn_id,
      subject: row.subject,
      detail: row.detail,
    })),
    next: rows.length > filter.limit ? String(page[page.length - 1]?.id) : null,
  };
}
