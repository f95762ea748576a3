import { sql } from 'kysely';
import type { Db } from '@herald/db';
import type { QueueDepth } from '@herald/telemetry';

/** The inbox as a queue: messages committed in Postgres and not answered yet. */
export const INBOX_QUEUE = 'inbox';

/** Pending and in-progress inbound messages and the oldest pending one's age (the open-events index). */
export async function inboxDepth(db: Db): Promise<QueueDepth & { oldestEventId: string | null; oldestSessionId: string | null }> {
  const { rows } = await sql<{ waiting: string; active: string; oldest_seconds: number | null; oldest_id: string | null; oldest_session: string | null }>`
    WITH open AS (SELECT id, session_id, status, received_at FROM inbound_events WHERE status IN ('pending', 'processing'))
    SELECT (SELECT count(*) FROM open WHERE status = 'pending') AS waiting,
           (SELECT count(*) FROM open WHERE status = 'processing') AS active,
           oldest.id AS oldest_id, oldest.session_id AS oldest_session,
           extract(epoch FROM clock_timestamp() - oldest.received_at)::float8 AS oldest_seconds
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (SELECT id, session_id, received_at FROM open WHERE status = 'pending' ORDER BY received_at LIMIT 1) AS oldest ON true`.execute(db);
  const row = rows[0];
  return {
    queue: INBOX_QUEUE,
    waiting: Number(row?.waiting ?? 0),
    active: Number(row?.active ?? 0),
    delayed: 0,
    failed: 0,
    oldestWaitingSeconds: Math.max(0, row?.oldest_seconds ?? 0),
    oldestEventId: row?.oldest_id ?? null,
    oldestSessionId: row?.oldest_session ?? null,
  };
}
