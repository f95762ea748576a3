import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Plan } from './search-plan.ts';
import { inVisibleChats, ownedBy, sessionsOfChats } from './search-scope.ts';
import { periodCtes } from './search-periods.ts';
import type { SearchScope } from './search-scope.ts';

/**
 * The bounded candidate set: the newest (or, sorted oldest first, the oldest) CANDIDATE_ROWS
 * (at most; see candidateRows) matching messages in the person's scope. Ranking happens within it, so a word that matches a
 * hundred thousand messages costs what a word matching a few hundred does. Named and documented
 * in docs/search.md.
 */
export const CANDIDATE_ROWS = 300;
/** The fewest candidates a search ranks, however few sessions it asks for. */
export const MIN_CANDIDATE_ROWS = 100;

/**
 * Candidates for a search that returns `limit` sessions of up to `hitsPerSession` hits: several
 * times what it shows, so the best hits of the newest matches are among them, within
 * MIN_CANDIDATE_ROWS..CANDIDATE_ROWS. Fewer candidates, a shorter walk for a common word.
 */
export function candidateRows(limit: number, hitsPerSession: number): number {
  return Math.min(CANDIDATE_ROWS, Math.max(MIN_CANDIDATE_ROWS, 4 * limit * hitsPerSession));
}
/**
 * How many of the person's own newest messages the walk reads, through the
 * (owner_id, profile_id, created_at) btree, before the periods take over: a term matching at least
 * 1.25 * CANDIDATE_ROWS / CANDIDATE_WALK_ROWS of recent messages (a common word) is answered by
 * this walk alone, whatever its count over all history. Below that density the matches are read
 * period by period through the GIN indexes (search-periods.ts, docs/decisions/2026-12-06-search-periods.md).
 */
export const CANDIDATE_WALK_ROWS = 4000;
/** The recent-scan route (nothing an index serves) reads at most this many of a person's newest messages. */
export const RECENT_SCAN_WINDOW = 50_000;

export interface CandidateQuery {
  scope: SearchScope;
  /** What the person sees of sessions they did not start, `<session id> <chat key>` (otherVisibleChats), read before planning. */
  others: readonly string[];
  plan: Plan;
  /** Conditions on `messages m` besides the query: roles, platforms, sessions. */
  filters: RawBuilder<unknown>[];
  /** Conditions on m.created_at, also served by the btree walk. */
  timeRange: RawBuilder<unknown>[];
  oldestFirst: boolean;
  /** How many candidates: candidateRows(). */
  rows: number;
  /** Sessions returned, and hits shown per session, of the ranked candidates. */
  sessions: number;
  hitsPerSession: number;
  /**
   * The most the query can be of the person's messages, from the column statistics
   * (ownerDensityBound); null when unknown. Below walkPays' threshold the walk is left out.
   */
  densityBound?: number | null | undefined;
}

/**
 * Whether walking the person's newest messages can find `rows` candidates within
 * CANDIDATE_WALK_ROWS: not when even every match of the term being theirs leaves them sparser
 * than that. Unknown (no statistics) walks, as a term may be common.
 */
export function walkPays(densityBound: number | null | undefined, rows: number): boolean {
  return densityBound === null || densityBound === undefined || densityBound * CANDIDATE_WALK_ROWS >= 1.25 * rows;
}

function and(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`true` : sql.join(conditions, sql` AND `);
}

/**
 * Every one of the person's matches through the composite GIN indexes in one scan: when the walk
 * and the periods (search-periods.ts) fall short, the term has few matches in all.
 */
function allAtOnce(query: CandidateQuery, matches: RawBuilder<unknown>, within: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`SELECT m.id, m.created_at FROM messages m
    WHERE (SELECT count(*) FROM walk) < ${query.rows}
      AND (SELECT count(*) FROM (SELECT id FROM periods UNION SELECT id FROM periods_on) w) < ${query.rows}
      AND ${ownedBy(query.scope)} AND ${within} AND ${matches}`;
}

/**
 * Common CTEs `walk`, `periods`, `periods_on`, `own_hits`, `other_hits` and `candidates` (id,
 * created_at). The walk reads the owner's messages in time order and stops after `rows` matches or
 * CANDIDATE_WALK_ROWS rows (the inner LIMIT keeps the condition from being pushed into an index
 * choice the planner might get wrong); only when it falls short are the matches read period by period
 * through the composite GIN indexes (search-periods.ts), and only when those fall short all at once
 * (own_hits). A term the statistics show too sparse for the walk skips it.
 * Sessions seen without being owned are searched through the same indexes by session_id, given
 * as a literal array; with none (the common case) that branch is left out of the statement.
 */
export function candidateCtes(query: CandidateQuery): RawBuilder<unknown> {
  const { scope, plan } = query;
  const dir = query.oldestFirst ? sql`ASC` : sql`DESC`;
  const recent = plan.route === 'recent-scan';
  const walkRows = recent ? RECENT_SCAN_WINDOW : walkPays(query.densityBound, query.rows) ? CANDIDATE_WALK_ROWS : 0;
  const matches = and([plan.condition, ...query.filters]);
  // One scan of every period (and of the sessions seen without being owned): every term indexable.
  const everyMatch = and([plan.everyTermIndexed, ...query.filters]);
  const within = and(query.timeRange);
  const periodScan = { scope, rows: query.rows, oldestFirst: query.oldestFirst, prefixPostings: plan.prefixPostings, matches, within, walked: walkRows > 0 };
  const others = sql`m.session_id = ANY (${sessionsOfChats(query.others)}::uuid[]) AND ${inVisibleChats(query.others)}`;
  // Nothing indexes the recent-scan condition: the other sessions are read newest first up to the window.
  const otherHits = recent
    ? sql`SELECT m.id, m.created_at FROM (SELECT * FROM messages m WHERE ${others} AND ${within}
            ORDER BY m.created_at ${dir} LIMIT ${walkRows}) m WHERE ${matches}`
    : sql`SELECT m.id, m.created_at FROM messages m WHERE ${others} AND ${within} AND ${everyMatch}`;
  const walk = sql`
      SELECT m.id, m.created_at FROM (
        SELECT * FROM messages m WHERE ${ownedBy(scope)} AND ${within} ORDER BY m.created_at ${dir} LIMIT ${walkRows}) m
      WHERE ${matches} ORDER BY m.created_at ${dir} LIMIT ${query.rows}`;
  const branches = [
    sql`SELECT id, created_at FROM walk`,
    ...(recent ? [] : ['periods', 'periods_on', 'own_hits'].map((cte) => sql`SELECT id, created_at FROM ${sql.id(cte)}`)),
    ...(query.others.length > 0 ? [sql`SELECT id, created_at FROM other_hits`] : []),
  ];
  return sql`
    walk AS MATERIALIZED (${walk}),
    ${recent ? sql`` : sql`${periodCtes(periodScan)} own_hits AS MATERIALIZED (${allAtOnce(query, everyMatch, within)}),`}
    ${query.others.length > 0 ? sql`other_hits AS MATERIALIZED (${otherHits}),` : sql``}
    candidates AS (
      ${sql.join(branches, sql` UNION `)}
      ORDER BY created_at ${dir}, id ${dir} LIMIT ${query.rows})`;
}
