import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Db } from '@herald/db';
import type { MessageRole } from '@herald/db';
import { recordSearch } from '@herald/telemetry';
import { likePattern, longestWordRun, parseSearchQuery, SearchQueryError, tsqueryOperand } from './search-query.ts';
import type { ParsedQuery, SearchTerm, SubstringTerm, WordTerm } from './search-query.ts';
import { isUuid } from '@herald/core';

/** Who is asking: a person in a profile. Every search and every transcript read goes through this. */
export interface SearchScope {
  profileId: string;
  userId: string;
}

export type SearchSort = 'relevance' | 'newest' | 'oldest';
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

/**
 * How the query was answered: the tsvector index, the trigram index, both, or a scan of the most
 * recent messages for text no index can serve (1-2 CJK characters, emoji).
 */
export type SearchRoute = 'fulltext' | 'trigram' | 'mixed' | 'recent-scan';

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
  /** Matching messages considered (at most SEARCH_SCAN_ROWS). */
  matched: number;
}

/** Matching messages ranked before grouping by session (Hermes scans 300). */
export const SEARCH_SCAN_ROWS = 300;
/** The recent-scan route reads at most this many of the newest visible messages. */
export const RECENT_SCAN_WINDOW = 50_000;
export const MAX_SEARCH_LIMIT = 50;
export const MAX_HITS_PER_SESSION = 10;
const SNIPPET_RADIUS = 80;
export const HIGHLIGHT_START = '>>>';
export const HIGHLIGHT_END = '<<<';

/** The indexed text of a message; the trigram index in migrations/0001_baseline.sql spells it the same. */
const SEARCH_TEXT = sql`(m.content || coalesce(' ' || m.tool_text, ''))`;

/**
 * The sessions a person may search in a profile: the ones they started, the ones they wrote in
 * (group chats), and those whose chat type the profile shares (profiles.search_shared_chat_types).
 * The tool and the API both use this, so they cannot disagree.
 */
export function visibleSessions(scope: SearchScope): RawBuilder<unknown> {
  return sql`
    SELECT s.id, s.platform, s.chat_type, s.created_at, s.parent_session_id FROM sessions s
    WHERE s.profile_id = ${scope.profileId} AND (
      s.origin_user_id = ${scope.userId}
      OR s.chat_type = ANY ((SELECT p.search_shared_chat_types FROM profiles p WHERE p.id = ${scope.profileId})::text[])
      OR EXISTS (SELECT 1 FROM inbound_events e WHERE e.user_id = ${scope.userId} AND e.session_id = s.id))`;
}

export async function canSeeSession(db: Db, scope: SearchScope, sessionId: string): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const rows = await sql`SELECT 1 FROM (${visibleSessions(scope)}) v WHERE v.id = ${sessionId}::uuid`.execute(db);
  return rows.rows.length > 0;
}

interface Plan {
  route: SearchRoute;
  condition: RawBuilder<unknown>;
  rank: RawBuilder<unknown>;
  /** For ts_headline: every positive word operand ORed, or null when there is none. */
  headlineQuery: string | null;
  substrings: string[];
}

/** Words that are only English stop words ("the", "to be") have no lexeme; find them as substrings. */
async function lexemeCounts(db: Db, operands: string[]): Promise<number[]> {
  if (operands.length === 0) return [];
  const rows = await sql<{ nodes: number }>`
    SELECT numnode(to_tsquery('english'::regconfig, o.operand)) AS nodes
    FROM unnest(${operands}::text[]) WITH ORDINALITY AS o(operand, n) ORDER BY o.n`.execute(db);
  return rows.rows.map((row) => row.nodes);
}

async function plan(db: Db, parsed: ParsedQuery): Promise<Plan> {
  const words = parsed.alternatives.flat().filter((term): term is WordTerm => term.kind === 'word');
  const counts = await lexemeCounts(db, words.map((term) => tsqueryOperand({ ...term, negated: false })));
  const stopWordsOnly = new Set(words.filter((_, i) => counts[i] === 0));
  const alternatives: SearchTerm[][] = parsed.alternatives
    .map((terms) =>
      terms.flatMap((term): SearchTerm[] => {
        if (term.kind !== 'word' || !stopWordsOnly.has(term)) return [term];
        // A negated stop word cannot be excluded by the index and excludes almost everything by substring.
        return term.negated ? [] : [{ kind: 'substring', text: term.text, negated: false }];
      }),
    )
    .filter((terms) => terms.some((term) => !term.negated));

  if (alternatives.length === 0) throw new SearchQueryError('query has no words or characters to search for');
  let usesWords = false;
  let usesSubstrings = false;
  let indexable = true;
  const headlineOperands: string[] = [];
  const substrings: string[] = [];
  const conditions: RawBuilder<unknown>[] = [];
  const ranks: RawBuilder<unknown>[] = [];
  for (const terms of alternatives) {
    const wordTerms = terms.filter((term): term is WordTerm => term.kind === 'word');
    const substringTerms = terms.filter((term): term is SubstringTerm => term.kind === 'substring');
    const parts: RawBuilder<unknown>[] = [];
    const positiveWords = wordTerms.filter((term) => !term.negated);
    if (positiveWords.length > 0) {
      const tsquery = wordTerms.map(tsqueryOperand).join(' & ');
      parts.push(sql`m.search_vector @@ to_tsquery('english'::regconfig, ${tsquery})`);
      ranks.push(sql`ts_rank(m.search_vector, to_tsquery('english'::regconfig, ${tsquery}))`);
      headlineOperands.push(...positiveWords.map((term) => tsqueryOperand(term)));
      usesWords = true;
    } else if (wordTerms.length > 0) {
      // Only excluded words next to substrings: the exclusion cannot drive an index scan.
      parts.push(sql`NOT (m.search_vector @@ to_tsquery('english'::regconfig, ${wordTerms.map((t) => tsqueryOperand({ ...t, negated: false })).join(' | ')}))`);
    }
    for (const term of substringTerms) {
      const pattern = likePattern(term.text);
      // CJK has no case: LIKE skips ILIKE's per-row lower() and still uses the trigram index.
      const caseless = term.text.toLowerCase() === term.text.toUpperCase();
      const matches = caseless ? sql`${SEARCH_TEXT} LIKE ${pattern}` : sql`${SEARCH_TEXT} ILIKE ${pattern}`;
      if (term.negated) {
        parts.push(sql`NOT (${matches})`);
        continue;
      }
      parts.push(matches);
      substrings.push(term.text);
      usesSubstrings = true;
      // A rough term frequency: occurrences of the substring, damped by the message length.
      const haystack = caseless ? SEARCH_TEXT : sql`lower(${SEARCH_TEXT})`;
      const needle = caseless ? term.text : term.text.toLowerCase();
      ranks.push(sql`(least(5, (length(${haystack}) - length(replace(${haystack}, ${needle}, ''))) / ${Math.max(1, needle.length)}) * 0.05 / (1 + ln(1 + length(m.content) / 500.0)))`);
    }
    const servedByIndex = positiveWords.length > 0 || substringTerms.some((term) => !term.negated && longestWordRun(term.text) >= 3);
    if (!servedByIndex) indexable = false;
    conditions.push(sql`(${sql.join(parts, sql` AND `)})`);
  }
  const route: SearchRoute = !indexable ? 'recent-scan' : usesWords && usesSubstrings ? 'mixed' : usesWords ? 'fulltext' : 'trigram';
  return {
    route,
    condition: sql`(${sql.join(conditions, sql` OR `)})`,
    rank: ranks.length > 0 ? sql`(${sql.join(ranks, sql` + `)})` : sql`0`,
    headlineQuery: headlineOperands.length > 0 ? headlineOperands.join(' | ') : null,
    substrings,
  };
}

function clamp(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(1, Math.floor(value)));
}

interface HitRow {
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
    const pattern = new RegExp(substrings.filter((s) => s.length > 0).map(escapeRegExp).join('|'), 'giu');
    window = window.replace(pattern, (match) => `${HIGHLIGHT_START}${match}${HIGHLIGHT_END}`);
  }
  return `${start > 0 ? '...' : ''}${window}${end < flat.length ? '...' : ''}`;
}

/**
 * Searches the messages a person may see. Ranked by relevance (recency breaks ties) or by time,
 * grouped by session in the order of each session's best hit.
 */
export async function searchHistory(db: Db, scope: SearchScope, options: SearchOptions): Promise<SearchResult> {
  const started = performance.now();
  try {
    return await runSearch(db, scope, options);
  } finally {
    recordSearch((performance.now() - started) / 1000);
  }
}

async function runSearch(db: Db, scope: SearchScope, options: SearchOptions): Promise<SearchResult> {
  const parsed = parseSearchQuery(options.query);
  const searchPlan = await plan(db, parsed);
  const limit = clamp(options.limit, 5, MAX_SEARCH_LIMIT);
  const hitsPerSession = clamp(options.hitsPerSession, 3, MAX_HITS_PER_SESSION);
  const sort = options.sort ?? 'relevance';

  const filters: RawBuilder<unknown>[] = [searchPlan.condition];
  if (options.roles && options.roles.length > 0) filters.push(sql`m.role = ANY (${[...options.roles]}::text[])`);
  if (options.platforms && options.platforms.length > 0) filters.push(sql`v.platform = ANY (${[...options.platforms]}::text[])`);
  if (options.sessionId !== undefined) filters.push(sql`m.session_id = ${options.sessionId}::uuid`);
  if (options.excludeSessionIds && options.excludeSessionIds.length > 0) {
    filters.push(sql`m.session_id <> ALL (${[...options.excludeSessionIds]}::uuid[])`);
  }
  if (options.from) filters.push(sql`m.created_at >= ${options.from}`);
  if (options.to) filters.push(sql`m.created_at < ${options.to}`);
  const where = sql.join(filters, sql` AND `);
  const order =
    sort === 'newest'
      ? sql`m.created_at DESC, m.id DESC`
      : sort === 'oldest'
        ? sql`m.created_at ASC, m.id ASC`
        : // Rounded so that near-equal scores fall back to recency.
          sql`round((${searchPlan.rank})::numeric, 4) DESC, m.created_at DESC, m.id DESC`;

  const source =
    searchPlan.route === 'recent-scan'
      ? // No index can find these characters: read the visible sessions newest first, message by
        // message, and stop after the window, so the scan is bounded whatever the history size.
        // OFFSET 0 keeps the lateral join a nested loop that streams in that order; the session
        // columns ride along so nothing joins back to the (misestimated) window.
        sql`(SELECT mm.*, recent.platform AS v_platform, recent.chat_type AS v_chat_type, recent.created_at AS v_created_at
              FROM (SELECT * FROM visible ORDER BY created_at DESC) recent
              CROSS JOIN LATERAL (SELECT * FROM messages x WHERE x.session_id = recent.id OFFSET 0) mm
              LIMIT ${RECENT_SCAN_WINDOW}) m
            CROSS JOIN LATERAL (SELECT m.v_platform AS platform, m.v_chat_type AS chat_type, m.v_created_at AS created_at) v`
      : sql`messages m JOIN visible v ON v.id = m.session_id`;
  // JIT compiles for ~50-100 ms once a plan's estimated cost crosses jit_above_cost, which a search
  // over a large history does; these plans never run long enough to win that back. Parallel
  // workers cost more to start than they save here, and searches come many at a time.
  const rows = await db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`.execute(trx);
    return sql<HitRow>`
    WITH visible AS (${visibleSessions(scope)})
    SELECT m.id::text AS id, m.session_id, m.seq, m.role, m.tool_name, m.created_at,
           v.platform, v.chat_type, v.created_at AS session_created_at, (${searchPlan.rank})::float8 AS rank
    FROM ${source}
    WHERE ${where}
    ORDER BY ${order}
    LIMIT ${SEARCH_SCAN_ROWS}`.execute(trx);
  });

  const grouped = new Map<string, { row: HitRow; hits: HitRow[] }>();
  for (const row of rows.rows) {
    let group = grouped.get(row.session_id);
    if (!group) {
      if (grouped.size >= limit) continue;
      group = { row, hits: [] };
      grouped.set(row.session_id, group);
    }
    if (group.hits.length < hitsPerSession) group.hits.push(row);
  }
  const chosen = [...grouped.values()].flatMap((group) => group.hits.map((hit) => hit.id));
  const snippets = await snippetsFor(db, chosen, searchPlan);
  return {
    route: searchPlan.route,
    matched: rows.rows.length,
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
        snippet: snippets.get(hit.id) ?? '',
      })),
    })),
  };
}

async function snippetsFor(db: Db, ids: string[], searchPlan: Plan): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const headline =
    searchPlan.headlineQuery === null
      ? sql<string | null>`NULL`
      : sql<string | null>`ts_headline('english'::regconfig, ${SEARCH_TEXT}, to_tsquery('english'::regconfig, ${searchPlan.headlineQuery}),
          ${`StartSel=${HIGHLIGHT_START}, StopSel=${HIGHLIGHT_END}, MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" ... "`})`;
  const rows = await sql<{ id: string; text: string; headline: string | null }>`
    SELECT m.id::text AS id, ${SEARCH_TEXT} AS text, ${headline} AS headline
    FROM messages m WHERE m.id = ANY (${ids}::bigint[])`.execute(db);
  const result = new Map<string, string>();
  for (const row of rows.rows) {
    const marked = row.headline !== null && row.headline.includes(HIGHLIGHT_START);
    result.set(row.id, marked ? row.headline!.replace(/\s+/g, ' ').trim() : substringSnippet(row.text, searchPlan.substrings));
  }
  return result;
}
