import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { MessageRole } from '@herald/db';
import { candidateCtes } from './search-candidates.ts';
import type { CandidateQuery } from './search-candidates.ts';
import { SEARCH_TEXT } from './search-plan.ts';

export type SearchSort = 'relevance' | 'newest' | 'oldest';

export const HIGHLIGHT_START = '>>>';
export const HIGHLIGHT_END = '<<<';

/** One shown hit: its message, its session, and its text with ts_headline's marks (null without word terms). */
export interface HitRow {
  id: string;
  session_id: string;
  seq: number;
  role: MessageRole;
  tool_name: string | null;
  created_at: Date;
  platform: string;
  chat_type: string;
  session_created_at: Date;
  rank: number;
  /** Candidates ranked, the same on every row. */
  matched: number;
  text: string;
  headline: string | null;
}

function headlineOf(query: CandidateQuery): RawBuilder<string | null> {
  const words = query.plan.headlineQuery;
  if (words === null) return sql<string | null>`NULL`;
  return sql<string | null>`ts_headline('english'::regconfig, ${SEARCH_TEXT}, to_tsquery('english'::regconfig, ${words}),
    ${`StartSel=${HIGHLIGHT_START}, StopSel=${HIGHLIGHT_END}, MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" ... "`})`;
}

/**
 * The whole search in one statement: the candidate set, ranked or ordered in time, grouped by
 * session in the order of each session's best hit (`sessions` of them, up to `hitsPerSession`
 * hits each), with the shown hits' text and headline, so no round trip follows for snippets. The
 * text is read for the shown hits only (a long message's is TOASTed: reading it for every
 * candidate cost more than the ranking).
 */
export function searchSql(query: CandidateQuery, sort: SearchSort): RawBuilder<HitRow> {
  const order =
    sort === 'newest'
      ? sql`m.created_at DESC, m.id DESC`
      : sort === 'oldest'
        ? sql`m.created_at ASC, m.id ASC`
        : // Rounded so that near-equal scores fall back to recency.
          sql`round((${query.plan.rank})::numeric, 4) DESC, m.created_at DESC, m.id DESC`;
  return sql<HitRow>`
    WITH ${candidateCtes(query)},
    ranked AS (
      SELECT m.id::text AS id, m.session_id, m.seq, m.role, m.tool_name, m.created_at, s.platform, s.chat_type,
             s.created_at AS session_created_at, (${query.plan.rank})::float8 AS rank,
             row_number() OVER (ORDER BY ${order}) AS pos
      FROM candidates c JOIN messages m ON m.id = c.id JOIN sessions s ON s.id = m.session_id),
    placed AS (
      SELECT r.*, row_number() OVER (PARTITION BY r.session_id ORDER BY r.pos) AS nth,
             min(r.pos) OVER (PARTITION BY r.session_id) AS first, count(*) OVER () AS matched
      FROM ranked r),
    shown AS (
      SELECT p.*, dense_rank() OVER (ORDER BY p.first) AS session_no FROM placed p WHERE p.nth <= ${query.hitsPerSession})
    SELECT h.id, h.session_id, h.seq, h.role, h.tool_name, h.created_at, h.platform, h.chat_type, h.session_created_at,
           h.rank, h.matched::int AS matched, ${SEARCH_TEXT} AS text, ${headlineOf(query)} AS headline
    FROM shown h JOIN messages m ON m.id = h.id::bigint
    WHERE h.session_no <= ${query.sessions}
    ORDER BY h.pos`;
}
