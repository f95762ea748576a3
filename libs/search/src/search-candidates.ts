import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Plan } from './search-plan.ts';
import { inVisibleChats, ownedBy, sessionsOfChats } from './search-scope.ts';
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
/**
 * The most rows the walk reads in all. When the first CANDIDATE_WALK_ROWS hold some matches but
 * too few, their density says how far back CANDIDATE_ROWS would lie; the walk goes on that far
 * (with a quarter to spare) if it is within this bound. Reading a person's messages in time order
 * costs several times less per row than fetching scattered matches from the GIN index's bitmap, so
 * a term with a few hundred matches per ten thousand messages is cheaper walked than looked up.
 */
export const CANDIDATE_WALK_MAX_ROWS = 20_000;
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
  /**
   * The most the query can be of the person's messages, from the column statistics
   * (ownerDensityBound); null when unknown. Below walkPays' threshold the walk is left out.
   */
  densityBound?: number | null | undefined;
}

/**
 * Whether walking the person's newest messages can find `rows` candidates within
 * CANDIDATE_WALK_MAX_ROWS: not when even every match of the term being theirs leaves them sparser
 * than walk_on's own threshold. Unknown (no statistics) walks, as a term may be common.
 */
export function walkPays(densityBound: number | null | undefined, rows: number): boolean {
  return densityBound === null || densityBound === undefined || densityBound * CANDIDATE_WALK_MAX_ROWS >= 1.25 * rows;
}

function and(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`true` : sql.join(conditions, sql` AND `);
}

/**
 * Common CTEs `walk`, `walk_on`, `own_hits`, `other_hits` and `candidates` (id, created_at). The
 * walk reads the owner's messages in time order and stops after CANDIDATE_ROWS matches or
 * CANDIDATE_WALK_ROWS rows (the inner LIMIT keeps the condition from being pushed into an index
 * choice the planner might get wrong); walk_on reads further when the walk's density puts the
 * candidates within CANDIDATE_WALK_MAX_ROWS; only when both fall short does own_hits ask the composite
 * GIN index (owner_id first) for every match, which a term rare in recent history has few of.
 * Sessions seen without being owned are searched through the same indexes by session_id, given
 * as a literal array; with none (the common case) that branch is left out of the statement.
 */
export function candidateCtes(query: CandidateQuery): RawBuilder<unknown> {
  const { scope, plan } = query;
  const dir = query.oldestFirst ? sql`ASC` : sql`DESC`;
  const recent = plan.route === 'recent-scan';
  // A term the statistics show too sparse for the walk goes straight to the GIN index (own_hits).
  const walkRows = recent ? RECENT_SCAN_WINDOW : walkPays(query.densityBound, query.rows) ? CANDIDATE_WALK_ROWS : 0;
  const matches = and([plan.condition, ...query.filters]);
  const within = and(query.timeRange);
  const others = sql`m.session_id = ANY (${sessionsOfChats(query.others)}::uuid[]) AND ${inVisibleChats(query.others)}`;
  // Nothing indexes the recent-scan condition: the other sessions are read newest first up to the window.
  const otherHits = recent
    ? sql`SELECT m.id, m.created_at FROM (SELECT * FROM messages m WHERE ${others} AND ${within}
            ORDER BY m.created_at ${dir} LIMIT ${walkRows}) m WHERE ${matches}`
    : sql`SELECT m.id, m.created_at FROM messages m WHERE ${others} AND ${within} AND ${matches}`;
  const ownHits = recent
    ? null
    : sql`SELECT m.id, m.created_at FROM messages m
          WHERE (SELECT count(*) FROM walk) < ${query.rows} AND (SELECT count(*) FROM walk_on) < ${query.rows} AND ${ownedBy(scope)} AND ${within} AND ${matches}`;
  // The second stage's length from the first's density; 0 (nothing read) when the first found
  // enough or the matches are too sparse for the walk to be the cheaper way.
  const further = sql`(SELECT CASE WHEN n >= ${query.rows} OR n = 0 THEN 0
      WHEN ceil(${CANDIDATE_WALK_ROWS * 1.25 * query.rows}::numeric / n) <= ${CANDIDATE_WALK_MAX_ROWS}
      THEN ceil(${CANDIDATE_WALK_ROWS * 1.25 * query.rows}::numeric / n)::int ELSE 0 END FROM (SELECT count(*) AS n FROM walk) w)`;
  const walkSql = (rows: RawBuilder<unknown>) => sql`
      SELECT m.id, m.created_at FROM (
        SELECT * FROM messages m WHERE ${ownedBy(scope)} AND ${within} ORDER BY m.created_at ${dir} LIMIT ${rows}) m
      WHERE ${matches} ORDER BY m.created_at ${dir} LIMIT ${query.rows}`;
  const branches = [
    sql`SELECT id, created_at FROM walk`,
    ...(ownHits ? [sql`SELECT id, created_at FROM walk_on`, sql`SELECT id, created_at FROM own_hits`] : []),
    ...(query.others.length > 0 ? [sql`SELECT id, created_at FROM other_hits`] : []),
  ];
  return sql`
    walk AS MATERIALIZED (${walkSql(sql`${walkRows}`)}),
    ${ownHits ? sql`walk_on AS MATERIALIZED (${walkSql(further)}), own_hits AS MATERIALIZED (${ownHits}),` : sql``}
    ${query.others.length > 0 ? sql`other_hits AS MATERIALIZED (${otherHits}),` : sql``}
    candidates AS (
      ${sql.join(branches, sql` UNION `)}
      ORDER BY created_at ${dir}, id ${dir} LIMIT ${query.rows})`;
}
