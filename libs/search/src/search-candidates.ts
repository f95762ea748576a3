import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Plan } from './search-plan.ts';
import { otherVisibleSessionIds, ownedBy } from './search-scope.ts';
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
 * How many of the person's own newest messages the first phase reads, through the
 * (owner_id, profile_id, created_at) btree, before it hands over to the composite GIN indexes: a
 * term matching at least CANDIDATE_ROWS / CANDIDATE_WALK_ROWS of recent messages (a common word)
 * is answered by this walk alone, whatever its count over all history.
 */
export const CANDIDATE_WALK_ROWS = 4000;
/** The recent-scan route (nothing an index serves) reads at most this many of a person's newest messages. */
export const RECENT_SCAN_WINDOW = 50_000;

export interface CandidateQuery {
  scope: SearchScope;
  plan: Plan;
  /** Conditions on `messages m` besides the query: roles, platforms, sessions. */
  filters: RawBuilder<unknown>[];
  /** Conditions on m.created_at, also served by the btree walk. */
  timeRange: RawBuilder<unknown>[];
  oldestFirst: boolean;
  /** How many candidates: candidateRows(). */
  rows: number;
}

function and(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`true` : sql.join(conditions, sql` AND `);
}

/**
 * Common CTEs `walk`, `own_hits`, `other_hits` and `candidates` (id, created_at). The walk reads
 * the owner's messages in time order and stops after CANDIDATE_ROWS matches or
 * CANDIDATE_WALK_ROWS rows (the inner LIMIT keeps the condition from being pushed into an index
 * choice the planner might get wrong); only when it falls short does own_hits ask the composite
 * GIN index (owner_id first) for every match, which a term rare in recent history has few of.
 * Sessions seen without being owned are searched through the same indexes by session_id.
 */
export function candidateCtes(query: CandidateQuery): RawBuilder<unknown> {
  const { scope, plan } = query;
  const dir = query.oldestFirst ? sql`ASC` : sql`DESC`;
  const recent = plan.route === 'recent-scan';
  const walkRows = recent ? RECENT_SCAN_WINDOW : CANDIDATE_WALK_ROWS;
  const matches = and([plan.condition, ...query.filters]);
  const within = and(query.timeRange);
  const others = sql`m.session_id = ANY (ARRAY(SELECT id FROM others))`;
  // Nothing indexes the recent-scan condition: the other sessions are read newest first up to the window.
  const otherHits = recent
    ? sql`SELECT m.id, m.created_at FROM (SELECT * FROM messages m WHERE ${others} AND ${within}
            ORDER BY m.created_at ${dir} LIMIT ${walkRows}) m WHERE ${matches}`
    : sql`SELECT m.id, m.created_at FROM messages m WHERE ${others} AND ${within} AND ${matches}`;
  const ownHits = recent
    ? sql`SELECT m.id, m.created_at FROM messages m WHERE false`
    : sql`SELECT m.id, m.created_at FROM messages m
          WHERE (SELECT count(*) FROM walk) < ${query.rows} AND ${ownedBy(scope)} AND ${within} AND ${matches}`;
  return sql`
    others AS MATERIALIZED (${otherVisibleSessionIds(scope)}),
    walk AS MATERIALIZED (
      SELECT m.id, m.created_at FROM (
        SELECT * FROM messages m WHERE ${ownedBy(scope)} AND ${within} ORDER BY m.created_at ${dir} LIMIT ${walkRows}) m
      WHERE ${matches} ORDER BY m.created_at ${dir} LIMIT ${query.rows}),
    own_hits AS MATERIALIZED (${ownHits}),
    other_hits AS MATERIALIZED (${otherHits}),
    candidates AS (
      SELECT id, created_at FROM walk UNION SELECT id, created_at FROM own_hits UNION SELECT id, created_at FROM other_hits
      ORDER BY created_at ${dir}, id ${dir} LIMIT ${query.rows})`;
}
