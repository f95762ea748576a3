// The soak's statement statistics per 5-minute window, from pg_stat_statements: which of Herald's
// queries get slower, or read more pages per call, as the tables grow over the run (issue 37's p99
// target). Only where the extension is loaded (shared_preload_libraries): the soak turns it on for
// its own throwaway database and reads nothing when it cannot.
import { sql } from 'kysely';
import type { Kysely } from 'kysely';

interface Counters {
  query: string;
  calls: number;
  totalMs: number;
  blocks: number;
}

export interface StatementTrend {
  query: string;
  /** Per window: calls, mean execution time and shared pages (hit or read) per call. */
  windows: { calls: number; meanMs: number | null; blocksPerCall: number | null }[];
}

/** Turns tracking on for the soak's database; false (and nothing recorded) where that is not possible. */
export async function trackStatements(db: Kysely<any>, databaseName: string): Promise<boolean> {
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db);
    // Read by the role processes' connections, which open after this. 'all': the statements inside
    // Herald's SQL functions (migrations/functions) are where a turn's writes spend their time.
    await sql.raw(`ALTER DATABASE "${databaseName.replaceAll('"', '""')}" SET pg_stat_statements.track = 'all'`).execute(db);
    await sql`SELECT 1 FROM pg_stat_statements LIMIT 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

/** The cumulative counters of every statement run in this database so far. */
export async function statementCounters(db: Kysely<any>): Promise<Map<string, Counters>> {
  const { rows } = await sql<{ queryid: string; query: string; calls: string; total_ms: number; blocks: string }>`
    SELECT queryid::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls, total_exec_time AS total_ms,
           shared_blks_hit + shared_blks_read AS blocks
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(db);
  return new Map(rows.map((row) => [row.queryid, { query: row.query, calls: Number(row.calls), totalMs: row.total_ms, blocks: Number(row.blocks) }]));
}

/**
 * The `top` statements by time over the run, each with its per-window figures, from the counters
 * taken at the start and at the end of every window.
 */
export function statementTrends(snapshots: Map<string, Counters>[], top = 16): StatementTrend[] {
  const last = snapshots.at(-1) ?? new Map<string, Counters>();
  const ids = [...last.keys()].sort((a, b) => last.get(b)!.totalMs - last.get(a)!.totalMs).slice(0, top);
  return ids.map((id) => ({
    query: last.get(id)!.query,
    windows: snapshots.slice(1).map((after, index) => {
      const before = snapshots[index]!.get(id);
      const now = after.get(id);
      const calls = (now?.calls ?? 0) - (before?.calls ?? 0);
      if (calls <= 0) return { calls: 0, meanMs: null, blocksPerCall: null };
      return {
        calls,
        meanMs: Math.round((((now?.totalMs ?? 0) - (before?.totalMs ?? 0)) / calls) * 100) / 100,
        blocksPerCall: Math.round(((now?.blocks ?? 0) - (before?.blocks ?? 0)) / calls),
      };
    }),
  }));
}
