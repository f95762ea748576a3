import { sql } from 'kysely';
import type { Db } from '@herald/db';

// How sparse a search term can be in one person's messages, from Postgres' column statistics of
// messages (docs/decisions/2026-12-02-search-walk-skip.md). The candidate walk (search-candidates.ts)
// reads a person's newest messages in time order and is wasted on a term too sparse to give the
// candidates within its bound; the statistics say so before the statement runs. They change only
// when Postgres analyzes the table, so each process keeps them for STATS_TTL_MS.

export const STATS_TTL_MS = 5 * 60_000;

export interface MessageStats {
  /** search_vector's most common lexemes with the share of messages holding each. */
  lexemes: Map<string, number>;
  /** The least share the statistics list: every lexeme they do not list is rarer. */
  leastLexemeShare: number;
  /** owner_id's most common values with their share of messages. */
  owners: Map<string, number>;
}

interface StatsRow {
  attname: string;
  elems: string[] | null;
  elem_freqs: number[] | null;
  vals: string[] | null;
  freqs: number[] | null;
}

const cache = new WeakMap<Db, { at: number; stats: Promise<MessageStats | null> }>();

async function readStats(db: Db): Promise<MessageStats | null> {
  const { rows } = await sql<StatsRow>`
    SELECT attname, most_common_elems::text::text[] AS elems, most_common_elem_freqs AS elem_freqs,
           most_common_vals::text::text[] AS vals, most_common_freqs AS freqs
    FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'messages' AND attname IN ('search_vector', 'owner_id')`.execute(db);
  const vector = rows.find((row) => row.attname === 'search_vector');
  const owner = rows.find((row) => row.attname === 'owner_id');
  if (!vector?.elems || !vector.elem_freqs || !owner?.vals || !owner.freqs) return null;
  const elemFreqs = vector.elem_freqs;
  // most_common_elem_freqs: one share per lexeme, then the least and the greatest of them.
  const lexemes = new Map(vector.elems.map((elem, i) => [elem, elemFreqs[i] ?? 0]));
  const ownerFreqs = owner.freqs;
  return {
    lexemes,
    leastLexemeShare: elemFreqs[vector.elems.length] ?? 0,
    owners: new Map(owner.vals.map((value, i) => [value, ownerFreqs[i] ?? 0])),
  };
}

/** The statistics, read at most once per STATS_TTL_MS per database handle; null when Postgres has none yet. */
export function messageStats(db: Db, now = Date.now()): Promise<MessageStats | null> {
  const held = cache.get(db);
  if (held && now - held.at < STATS_TTL_MS) return held.stats;
  const stats = readStats(db).catch(() => null);
  cache.set(db, { at: now, stats });
  return stats;
}

/** Shorter prefixes begin too many unlisted lexemes for the listed ones to bound them. */
const MIN_PREFIX = 4;

/** One lexeme of a tsquery's text, `'lexeme'` or `'lexeme':*`, quotes doubled inside. */
const LEXEME = /'((?:[^']|'')+)'(:\*)?/g;

/**
 * About this share of all messages holds every lexeme of `tsquery` (the text to_tsquery made of
 * one word), as Postgres estimates it: its least common lexeme's share; a prefix counts every
 * listed lexeme it begins; a lexeme the statistics do not list, half the least listed share.
 * Null when it has no lexeme.
 */
export function operandShare(stats: MessageStats, tsquery: string): number | null {
  let least: number | null = null;
  for (const [, quoted, prefix] of tsquery.matchAll(LEXEME)) {
    const lexeme = (quoted ?? '').replace(/''/g, "'");
    let share = stats.lexemes.get(lexeme);
    if (prefix !== undefined && lexeme.length < MIN_PREFIX) share = 1;
    else if (prefix !== undefined) {
      const listed = [...stats.lexemes].filter(([elem]) => elem.startsWith(lexeme)).reduce((sum, [, freq]) => sum + freq, 0);
      share = Math.max(listed, stats.leastLexemeShare / 2);
    }
    // Not listed: rarer than the least listed share; Postgres' own estimate takes half of it.
    share ??= stats.leastLexemeShare / 2;
    least = least === null ? share : Math.min(least, share);
  }
  return least;
}

/**
 * The share of all messages in the postings a GIN scan collects for the prefix lexemes of
 * `tsquery` (a prefix is a partial match: every scan gathers all of its lexemes' postings, of
 * every person and week, before it intersects them with the owner and the week). Exact lexemes
 * are read lazily and count 0; a prefix too short to bound counts 1.
 */
export function prefixPostingsShare(stats: MessageStats, tsquery: string): number {
  let sum = 0;
  for (const [, quoted, prefix] of tsquery.matchAll(LEXEME)) {
    if (prefix === undefined) continue;
    const lexeme = (quoted ?? '').replace(/''/g, "'");
    if (lexeme.length < MIN_PREFIX) return 1;
    const listed = [...stats.lexemes].filter(([elem]) => elem.startsWith(lexeme)).reduce((total, [, freq]) => total + freq, 0);
    sum += Math.max(listed, stats.leastLexemeShare / 2);
  }
  return Math.min(1, sum);
}

/**
 * The most a term of global share `share` can be of one person's messages: all of its matches
 * theirs. Null (no bound) for a person the statistics do not list among the most common owners,
 * whose history is small enough for the walk to be cheap anyway.
 */
export function ownerDensityBound(stats: MessageStats, ownerId: string, share: number): number | null {
  const owned = stats.owners.get(ownerId);
  if (owned === undefined || owned <= 0) return null;
  return Math.min(1, share / owned);
}
