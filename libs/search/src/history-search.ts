import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Db } from '@herald/db';
import type { MessageRole } from '@herald/db';
import { recordSearch } from '@herald/telemetry';
import { CANDIDATE_ROWS, candidateRows } from './search-candidates.ts';
import type { CandidateQuery } from './search-candidates.ts';
import { planQuery, queryLexemesSql } from './search-plan.ts';
import type { Lexemes, SearchRoute } from './search-plan.ts';
import { messageStats, ownerDensityBound } from './term-shares.ts';
import { parseSearchQuery } from './search-query.ts';
import { otherVisibleChats } from './search-scope.ts';
import type { SearchScope } from './search-scope.ts';
import { HIGHLIGHT_END, HIGHLIGHT_START, searchSql } from './search-statement.ts';
import type { HitRow, SearchSort } from './search-statement.ts';

export { HIGHLIGHT_END, HIGHLIGHT_START, searchSql };
export type { HitRow, SearchSort };

export const SEARCH_SORTS = ['relevance', 'newest', 'oldest'] as const satisfies readonly SearchSort[];

export interface SearchOptions {
  query: string;
  sort?: SearchSort | undefined;
  roles?: readonly MessageRole[] | undefined;
  platforms?: readonly string[] | undefined;
  sessionId?: string | undefined;
  /** Sessions to leave out, e.g. the asking session itself. */
  excludeSessionIds?: readonly string[] | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Sessions returned. */
  limit?: number | undefined;
  hitsPerSession?: number | undefined;
}

export interface SearchHit {
  messageId: string;
  seq: number;
  role: MessageRole;
  toolName: string | null;
  createdAt: Date;
  /** Matched words between `>>>` and `<<<`. */
  snippet: string;
}

export interface SessionResult {
  sessionId: string;
  platform: string;
  chatType: string;
  startedAt: Date;
  hits: SearchHit[];
}

export interface SearchResult {
  route: SearchRoute;
  sessions: SessionResult[];
  /** Matching messages considered: the bounded candidate set (at most SEARCH_SCAN_ROWS, see candidateRows). */
  matched: number;
}

/** Matching messages ranked before grouping by session (Hermes scans 300): the candidate set. */
export const SEARCH_SCAN_ROWS = CANDIDATE_ROWS;
export const MAX_SEARCH_LIMIT = 50;
export const MAX_HITS_PER_SESSION = 10;
const DEFAULT_LIMIT = 5;
const DEFAULT_HITS = 3;
const SNIPPET_RADIUS = 80;

function clamp(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(1, Math.floor(value)));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A window around the first substring match, every match marked; for hits ts_headline did not mark. */
export function substringSnippet(text: string, substrings: readonly string[], radius = SNIPPET_RADIUS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  let first = -1;
  for (const sub of substrings) {
    const at = lower.indexOf(sub.toLowerCase());
    if (at !== -1 && (first === -1 || at < first)) first = at;
  }
  const start = first === -1 ? 0 : Math.max(0, first - radius);
  const end = Math.min(flat.length, (first === -1 ? 0 : first) + radius * 2);
  let window = flat.slice(start, end);
  if (substrings.length > 0) {
    const pattern = new RegExp(
      substrings
        .filter((s) => s.length > 0)
        .map(escapeRegExp)
        .join('|'),
      'giu',
    );
    window = window.replace(pattern, (match) => `${HIGHLIGHT_START}${match}${HIGHLIGHT_END}`);
  }
  return `${start > 0 ? '...' : ''}${window}${end < flat.length ? '...' : ''}`;
}

/**
 * Searches the messages a person may see. Ranked by relevance (recency breaks ties) or by time,
 * within the bounded candidate set (search-candidates.ts), grouped by session in the order of
 * each session's best hit.
 */
export async function searchHistory(db: Db, scope: SearchScope, options: SearchOptions): Promise<SearchResult> {
  const started = performance.now();
  try {
    return await runSearch(db, scope, options);
  } finally {
    recordSearch((performance.now() - started) / 1000);
  }
}

/**
 * The parsed, planned query as SQL pieces: what searchSql runs and what tests EXPLAIN. One round
 * trip first: what the English configuration makes of each word, and the sessions the person
 * sees without owning them, so the statement is planned with both as constants.
 */
export async function candidateQuery(db: Db, scope: SearchScope, options: SearchOptions): Promise<CandidateQuery> {
  const parsed = parseSearchQuery(options.query);
  const [before, stats] = await Promise.all([
    sql<{ words: Lexemes[]; others: string[] }>`
      SELECT ${queryLexemesSql(parsed)} AS words, ${otherVisibleChats(scope)} AS others`.execute(db),
    messageStats(db),
  ]);
  const row = before.rows[0];
  const plan = planQuery(parsed, row?.words ?? [], stats);
  const filters: RawBuilder<unknown>[] = [];
  if (options.roles && options.roles.length > 0) filters.push(sql`m.role = ANY (${[...options.roles]}::text[])`);
  if (options.platforms && options.platforms.length > 0) filters.push(sql`m.platform = ANY (${[...options.platforms]}::text[])`);
  if (options.sessionId !== undefined) filters.push(sql`m.session_id = ${options.sessionId}::uuid`);
  if (options.excludeSessionIds && options.excludeSessionIds.length > 0) {
    filters.push(sql`m.session_id <> ALL (${[...options.excludeSessionIds]}::uuid[])`);
  }
  const timeRange: RawBuilder<unknown>[] = [];
  if (options.from) timeRange.push(sql`m.created_at >= ${options.from}`);
  if (options.to) timeRange.push(sql`m.created_at < ${options.to}`);
  const sessions = clamp(options.limit, DEFAULT_LIMIT, MAX_SEARCH_LIMIT);
  const hitsPerSession = clamp(options.hitsPerSession, DEFAULT_HITS, MAX_HITS_PER_SESSION);
  const rows = candidateRows(sessions, hitsPerSession);
  const sparse = plan.share !== null && stats !== null ? ownerDensityBound(stats, scope.userId, plan.share) : null;
  return { scope, others: row?.others ?? [], plan, filters, timeRange, oldestFirst: options.sort === 'oldest', rows, sessions, hitsPerSession, densityBound: sparse };
}

async function runSearch(db: Db, scope: SearchScope, options: SearchOptions): Promise<SearchResult> {
  const query = await candidateQuery(db, scope, options);
  // One statement, no transaction: its plan costs stay under jit_above_cost and parallel setup
  // (the walk is bounded, and the GIN branch is costed by its matches) on a million messages;
  // see docs/decisions/2026-12-02-search-latency.md for where that stops holding. It returns only
  // the hits shown, grouped and with their headlines (search-statement.ts).
  const rows = (await searchSql(query, options.sort ?? 'relevance').execute(db)).rows;
  const grouped = new Map<string, { row: HitRow; hits: HitRow[] }>();
  for (const row of rows) {
    const group = grouped.get(row.session_id) ?? { row, hits: [] };
    grouped.set(row.session_id, group);
    group.hits.push(row);
  }
  const substrings = query.plan.substrings;
  return {
    route: query.plan.route,
    matched: rows[0]?.matched ?? 0,
    sessions: [...grouped.values()].map(({ row, hits }) => ({
      sessionId: row.session_id,
      platform: row.platform,
      chatType: row.chat_type,
      startedAt: row.session_created_at,
      hits: hits.map((hit) => ({
        messageId: hit.id,
        seq: hit.seq,
        role: hit.role,
        toolName: hit.tool_name,
        createdAt: hit.created_at,
        snippet: snippetOf(hit, substrings),
      })),
    })),
  };
}

/** ts_headline's fragment when it marked a word, else a window around the first substring. */
function snippetOf(hit: HitRow, substrings: readonly string[]): string {
  const marked = hit.headline !== null && hit.headline.includes(HIGHLIGHT_START);
  return marked ? hit.headline!.replace(/\s+/g, ' ').trim() : substringSnippet(hit.text, substrings);
}
