import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { ownedBy } from './search-scope.ts';
import type { SearchScope } from './search-scope.ts';

// A person's matches newest period first (docs/decisions/2026-12-06-search-periods.md). GIN
// returns matches in no time order, so finding the newest hundred of a term meant fetching every
// match from the heap. Both composite GIN indexes hold the message's period of 28 days
// (migrations/0085_search_periods.sql): one scan per period reads that period's matches only, and
// the search stops at the period that completes its candidates.

/**
 * 28 days, the unit of the GIN indexes' period column: long enough that a rare term needs few
 * scans (each gathers its prefixes' postings anew), short enough that a term just too sparse for
 * the walk fetches a few hundred rows of one period.
 */
export const SEARCH_PERIOD_SECONDS = 2_419_200;
/** The person's newest periods read first, one GIN scan each. */
export const FIRST_PERIODS = 2;
/**
 * The most further periods read one scan each, when the first periods' matches project the
 * candidates within them (a quarter to spare); beyond that the term has few matches in all, and
 * one scan of every period gathers them (own_hits), as does a word the first periods hold none of.
 */
export const MORE_PERIODS_MAX = 12;
/**
 * The most a condition's prefixes may collect per GIN scan, as a share of all messages, for periods
 * to be read one scan each whatever the walk saw. A prefix is a partial match that every scan
 * gathers in full, of every person and period, before it intersects the owner and the period: a common
 * one ('web':* <-> 'search':*) costs more per period than one scan of every period.
 */
export const PERIODIC_MAX_PREFIX_POSTINGS = 0.02;

/** The period of a timestamp, spelled as the indexes compute it from created_at: the planner matches the expression as written. */
export function periodOf(at: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(floor(extract(epoch FROM ${at} - timestamptz '2000-01-01 00:00:00+00') / ${sql.raw(String(SEARCH_PERIOD_SECONDS))})::int)`;
}

/** What the period scans need of a search. */
export interface PeriodScan {
  scope: SearchScope;
  rows: number;
  oldestFirst: boolean;
  /** Plan.prefixPostings. */
  prefixPostings: number | null;
  /** The search condition on `messages m`, with the filters. */
  matches: RawBuilder<unknown>;
  /** Conditions on m.created_at. */
  within: RawBuilder<unknown>;
  /** Whether the walk (a CTE `walk`) read the person's newest messages. */
  walked: boolean;
}

/**
 * Whether the first periods are read. Not when the walk read the newest messages and found no
 * match at all: the term has few matches in all, which one scan of every period gathers once (as
 * before periods). Otherwise always when the condition's prefixes are cheap to gather per scan;
 * for common prefixes only when the walk's matches project the candidates within FIRST_PERIODS.
 */
function firstPeriodsGate(scan: PeriodScan): RawBuilder<unknown> {
  const found = scan.walked ? sql`(SELECT count(*) > 0 FROM walk)` : sql`true`;
  if (scan.prefixPostings === null || scan.prefixPostings <= PERIODIC_MAX_PREFIX_POSTINGS) return found;
  return sql`${found} AND (SELECT count(*) >= 2 AND ${scan.rows} * extract(epoch FROM max(created_at) - min(created_at)) / ${SEARCH_PERIOD_SECONDS}
      <= ${FIRST_PERIODS} * (count(*) - 1) FROM walk)`;
}

/**
 * `count` periods after the first `skip` of the person's periods in the range, newest first (oldest
 * first when sorted so), each a GIN scan led by the owner and the period, its matches in time order.
 * The nested loop emits the periods in that order, so the LIMIT keeps the newest `rows` matches.
 */
function periodScans(scan: PeriodScan, skip: RawBuilder<unknown>, count: RawBuilder<unknown>, most: number, gate: RawBuilder<unknown>): RawBuilder<unknown> {
  const { scope } = scan;
  const dir = scan.oldestFirst ? sql`ASC` : sql`DESC`;
  // The person's first or last message in the range, through the time btree (one row).
  const bound = (fn: 'min' | 'max') =>
    periodOf(sql`(SELECT m.created_at FROM messages m
         WHERE m.owner_id = ${scope.userId} AND m.profile_id = ${scope.profileId} AND ${scan.within}
         ORDER BY m.created_at ${fn === 'min' ? sql`ASC` : sql`DESC`} LIMIT 1)`);
  const periods = scan.oldestFirst
    ? sql`generate_series(${bound('min')} + ${skip}, least(${bound('max')}, ${bound('min')} + ${skip} + ${count} - 1), 1)`
    : sql`generate_series(${bound('max')} - ${skip}, greatest(${bound('min')}, ${bound('max')} - ${skip} - ${count} + 1), -1)`;
  // The LIMIT tells the planner how many periods (generate_series of subqueries is costed as a
  // thousand rows): with that many it would rather read every match once than scan per period.
  return sql`SELECT h.id, h.created_at FROM (SELECT p FROM ${periods} AS p LIMIT ${most}) AS w(period)
    CROSS JOIN LATERAL (
      SELECT m.id, m.created_at FROM messages m
      WHERE ${ownedBy(scope)} AND ${periodOf(sql`m.created_at`)} = w.period AND ${scan.within} AND ${scan.matches}
      ORDER BY m.created_at ${dir}, m.id ${dir}) h
    WHERE (SELECT count(*) FROM walk) < ${scan.rows} AND ${gate}
    LIMIT ${scan.rows}`;
}

/**
 * CTEs `periods` (the first FIRST_PERIODS periods) and `periods_on` (as many more as the first periods'
 * density projects the missing candidates in, a quarter to spare, up to MORE_PERIODS_MAX), both
 * after the walk (a CTE `walk`) and only when it fell short.
 */
export function periodCtes(scan: PeriodScan): RawBuilder<unknown> {
  const more = sql`(SELECT CASE WHEN n = 0 OR n >= ${scan.rows} THEN 0
      WHEN ceil(1.25 * (${scan.rows} - n) * ${FIRST_PERIODS} / n) <= ${MORE_PERIODS_MAX} THEN ceil(1.25 * (${scan.rows} - n) * ${FIRST_PERIODS} / n)::int
      ELSE 0 END FROM (SELECT count(*) AS n FROM periods) f)`;
  return sql`
    periods AS MATERIALIZED (${periodScans(scan, sql`0`, sql`${FIRST_PERIODS}`, FIRST_PERIODS, firstPeriodsGate(scan))}),
    periods_on AS MATERIALIZED (${periodScans(scan, sql`${FIRST_PERIODS}`, more, MORE_PERIODS_MAX, sql`(SELECT count(*) FROM periods) < ${scan.rows}`)}),`;
}
