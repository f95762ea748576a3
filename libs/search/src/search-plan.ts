import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { likePattern, longestWordRun, SearchQueryError, tsqueryOperand } from './search-query.ts';
import type { ParsedQuery, SearchTerm, SubstringTerm, WordTerm } from './search-query.ts';
import { operandShare, prefixPostingsShare } from './term-shares.ts';
import type { MessageStats } from './term-shares.ts';

/**
 * How the query was answered: the tsvector index, the trigram index, both, or a scan of the most
 * recent messages for text no index can serve (1-2 CJK characters, emoji).
 */
export type SearchRoute = 'fulltext' | 'trigram' | 'mixed' | 'recent-scan';

/** The indexed text of a message; the trigram index in migrations/0024_search_scope.sql spells it the same. */
export const SEARCH_TEXT = sql`(m.content || coalesce(' ' || m.tool_text, ''))`;

export interface Plan {
  route: SearchRoute;
  /**
   * A condition on `messages m` for scans of one period: one term drives the index scan (the
   * rarest word, or a CJK substring), the others are checked on its rows.
   */
  condition: RawBuilder<unknown>;
  /** The same condition with every term indexable, for the one scan of every period, where the planner may intersect them. */
  everyTermIndexed: RawBuilder<unknown>;
  rank: RawBuilder<unknown>;
  /** For ts_headline: every positive word operand ORed, or null when there is none. */
  headlineQuery: string | null;
  substrings: string[];
  /**
   * At most about this share of all messages matches (term-shares.ts), from the column
   * statistics; null when unknown (no statistics, or a substring or stop-word term).
   */
  share: number | null;
  /**
   * The share of all messages whose postings every GIN scan of the condition collects for its
   * prefixes (prefixPostingsShare, summed over the word operands); null without statistics.
   */
  prefixPostings: number | null;
}

/** What the english configuration makes of one word operand: its lexemes, as tsquery text. */
export interface Lexemes {
  nodes: number;
  query: string;
}

/**
 * What `to_tsquery('english', ...)` makes of each word operand, as JSON (a `Lexemes[]` in operand
 * order). A fragment, so the search runs it in the same round trip as the scope lookup.
 */
export function lexemesSql(operands: string[]): RawBuilder<Lexemes[]> {
  return sql<Lexemes[]>`coalesce((
    SELECT json_agg(json_build_object('nodes', numnode(q), 'query', q::text) ORDER BY o.n)
    FROM unnest(${operands}::text[]) WITH ORDINALITY AS o(operand, n),
         LATERAL to_tsquery('english'::regconfig, o.operand) AS q), '[]'::json)`;
}

/** `\m` + the word with the regex metacharacters a cleaned word can hold escaped. */
function wordStartRegex(text: string): string {
  return `\\m${text.replace(/[.\\]/g, (c) => `\\${c}`)}`;
}

interface Alternative {
  parts: RawBuilder<unknown>[];
  ranks: RawBuilder<unknown>[];
  headline: string[];
  substrings: string[];
  usesWords: boolean;
  usesSubstrings: boolean;
  /** A positive term an index serves: without one the alternative needs the recent scan. */
  indexed: boolean;
  /** The alternative's share of messages, at most: its rarest positive word's; null when unknown. */
  share: number | null;
  /** Plan.prefixPostings of this alternative's words. */
  prefixPostings: number | null;
}

function emptyAlternative(): Alternative {
  return { parts: [], ranks: [], headline: [], substrings: [], usesWords: false, usesSubstrings: false, indexed: false, share: null, prefixPostings: null };
}

/**
 * Word terms. English stems ("deploying" finds "deployment") with every single word a prefix. A
 * prefix the stemmer leaves alone may still begin a word whose stem is shorter (`serializ` and
 * `serialization`, stemmed `serial`): such words also match the unstemmed text at a word start,
 * through the trigram index. That alternative also finds the word inside a path or dotted name
 * (`server` in `src/server/index.ts`, one `file` lexeme to the parser), as FTS5 does; a tsvector
 * prefix alone lost those (docs/decisions/2026-12-02-search-latency.md).
 */
function addWords(alt: Alternative, words: WordTerm[], lexemes: Map<WordTerm, Lexemes>, stats: MessageStats | null, substringDrives = false): void {
  const positive = words.filter((term) => !term.negated);
  if (positive.length === 0) {
    if (words.length > 0) {
      // Only excluded words: the exclusion cannot drive an index scan.
      const operands = words.map((t) => tsqueryOperand({ ...t, negated: false })).join(' | ');
      alt.parts.push(sql`NOT (m.search_vector @@ to_tsquery('english'::regconfig, ${operands}))`);
    }
    return;
  }
  const unstemmed = positive.filter((term) => !term.phrase && lexemes.get(term)?.query === `'${term.text.toLowerCase()}':*`);
  // The rarest positive word alone drives the index scan, or none when a CJK substring of three or
  // more characters does (through the trigram index); the others are checked on its rows.
  const lead = substringDrives || stats === null ? null : rarestWord(stats, positive, lexemes);
  const indexed = (term: WordTerm) => !substringDrives && (lead === null || term === lead);
  const together = words.filter((term) => !unstemmed.includes(term));
  const driving = together.filter((term) => indexed(term) && (lead === null || !term.negated));
  const checked = together.filter((term) => !driving.includes(term));
  if (driving.some((term) => !term.negated)) {
    alt.parts.push(sql`m.search_vector @@ to_tsquery('english'::regconfig, ${driving.map(tsqueryOperand).join(' & ')})`);
  } else if (driving.length > 0) {
    alt.parts.push(sql`NOT (m.search_vector @@ to_tsquery('english'::regconfig, ${driving.map((t) => tsqueryOperand({ ...t, negated: false })).join(' | ')}))`);
  }
  if (checked.length > 0) {
    // ts_match_vq is @@ spelled as a function: the same test, which the planner does not take to an index.
    alt.parts.push(sql`ts_match_vq(m.search_vector, to_tsquery('english'::regconfig, ${checked.map(tsqueryOperand).join(' & ')}))`);
  }
  for (const term of unstemmed) {
    const stems = indexed(term)
      ? sql`m.search_vector @@ to_tsquery('english'::regconfig, ${tsqueryOperand(term)})`
      : sql`ts_match_vq(m.search_vector, to_tsquery('english'::regconfig, ${tsqueryOperand(term)}))`;
    alt.parts.push(sql`(${stems} OR (${SEARCH_TEXT} ILIKE ${likePattern(term.text)} AND ${SEARCH_TEXT} ~* ${wordStartRegex(term.text)}))`);
  }
  const scanned = substringDrives ? [] : lead === null ? words : [lead];
  alt.prefixPostings = stats === null ? null : scanned.reduce((sum, term) => sum + prefixPostingsShare(stats, lexemes.get(term)?.query ?? ''), 0);
  alt.share = stats === null ? null : wordsShare(stats, positive, lexemes);
  const operands = positive.map((term) => tsqueryOperand(term));
  alt.ranks.push(sql`ts_rank(m.search_vector, to_tsquery('english'::regconfig, ${operands.join(' & ')}))`);
  alt.headline.push(...operands);
  alt.usesWords = true;
  alt.indexed = true;
}

/** The positive word with the least share of messages (the first when none is known). */
function rarestWord(stats: MessageStats, positive: WordTerm[], lexemes: Map<WordTerm, Lexemes>): WordTerm | null {
  let best: { term: WordTerm; share: number } | null = null;
  for (const term of positive) {
    const share = operandShare(stats, lexemes.get(term)?.query ?? '') ?? 1;
    if (best === null || share < best.share) best = { term, share };
  }
  return best?.term ?? null;
}

/**
 * The share of messages holding every positive word: the rarest one's. (An unstemmed word also
 * matches at a word start inside a path through the trigram index, which the statistics do not
 * count; such matches are few beside the word's own.)
 */
function wordsShare(stats: MessageStats, positive: WordTerm[], lexemes: Map<WordTerm, Lexemes>): number | null {
  let least: number | null = null;
  for (const term of positive) {
    const share = operandShare(stats, lexemes.get(term)?.query ?? '');
    if (share !== null) least = least === null ? share : Math.min(least, share);
  }
  return least;
}

/**
 * Words that are only English stop words ("the", "how do i", "to be or not to be") have no
 * lexeme: they are found with the simple dictionary, which keeps every word, checked on the rows
 * the trigram index finds for their longest word.
 */
function addStopWords(alt: Alternative, words: WordTerm[]): void {
  if (words.length === 0) return;
  const longest = words.flatMap((term) => term.text.split(' ')).reduce((a, b) => (b.length > a.length ? b : a), '');
  const operands = words.map((term) => `'${term.text}'`).join(' & ');
  alt.parts.push(sql`${SEARCH_TEXT} ILIKE ${likePattern(longest)}`);
  alt.parts.push(sql`to_tsvector('simple'::regconfig, ${SEARCH_TEXT}) @@ to_tsquery('simple'::regconfig, ${operands})`);
  alt.ranks.push(sql`ts_rank(to_tsvector('simple'::regconfig, ${SEARCH_TEXT}), to_tsquery('simple'::regconfig, ${operands}))`);
  alt.substrings.push(...words.map((term) => term.text));
  alt.usesSubstrings = true;
  if (longestWordRun(longest) >= 3) alt.indexed = true;
}

function addSubstrings(alt: Alternative, terms: SubstringTerm[]): void {
  for (const term of terms) {
    const pattern = likePattern(term.text);
    // CJK has no case: LIKE skips ILIKE's per-row lower() and still uses the trigram index.
    const caseless = term.text.toLowerCase() === term.text.toUpperCase();
    const matches = caseless ? sql`${SEARCH_TEXT} LIKE ${pattern}` : sql`${SEARCH_TEXT} ILIKE ${pattern}`;
    if (term.negated) {
      alt.parts.push(sql`NOT (${matches})`);
      continue;
    }
    alt.parts.push(matches);
    alt.substrings.push(term.text);
    alt.usesSubstrings = true;
    if (longestWordRun(term.text) >= 3) alt.indexed = true;
    // A rough term frequency: occurrences of the substring, damped by the message length.
    const haystack = caseless ? SEARCH_TEXT : sql`lower(${SEARCH_TEXT})`;
    const needle = caseless ? term.text : term.text.toLowerCase();
    alt.ranks.push(sql`(least(5, (length(${haystack}) - length(replace(${haystack}, ${needle}, ''))) / ${Math.max(1, needle.length)}) * 0.05 / (1 + ln(1 + length(m.content) / 500.0)))`);
  }
}

function alternativeOf(terms: SearchTerm[], lexemes: Map<WordTerm, Lexemes>, stats: MessageStats | null, oneDriver = true): Alternative | null {
  const alt = emptyAlternative();
  const words = terms.filter((term): term is WordTerm => term.kind === 'word');
  // A negated stop word cannot be excluded by the index and excludes almost everything.
  const stop = words.filter((term) => lexemes.get(term)?.nodes === 0 && !term.negated);
  const substringDrives = oneDriver && terms.some((term) => term.kind === 'substring' && !term.negated && longestWordRun(term.text) >= 3);
  addWords(
    alt,
    words.filter((term) => lexemes.get(term)?.nodes !== 0),
    lexemes,
    oneDriver ? stats : null,
    substringDrives,
  );
  addStopWords(alt, stop);
  addSubstrings(
    alt,
    terms.filter((term): term is SubstringTerm => term.kind === 'substring'),
  );
  // A substring or stop-word term has no share in the statistics: the alternative's is unknown.
  if (alt.usesSubstrings) alt.share = null;
  return alt.usesWords || alt.usesSubstrings ? alt : null;
}

function conditionOf(alternatives: Alternative[]): RawBuilder<unknown> {
  return sql`(${sql.join(
    alternatives.map((alt) => sql`(${sql.join(alt.parts, sql` AND `)})`),
    sql` OR `,
  )})`;
}

/** The word terms of a query, in the order queryLexemesSql reports on them. */
function wordTermsOf(parsed: ParsedQuery): WordTerm[] {
  return parsed.alternatives.flat().filter((term): term is WordTerm => term.kind === 'word');
}

/** lexemesSql for every word term of a query. */
export function queryLexemesSql(parsed: ParsedQuery): RawBuilder<Lexemes[]> {
  return lexemesSql(wordTermsOf(parsed).map((term) => tsqueryOperand({ ...term, negated: false })));
}

/**
 * Turns a parsed query into one condition on `messages m`, a rank, and how indexes serve it;
 * `found` is what queryLexemesSql returned for it.
 */
export function planQuery(parsed: ParsedQuery, found: readonly Lexemes[], stats: MessageStats | null = null): Plan {
  const words = wordTermsOf(parsed);
  const lexemes = new Map(words.map((term, i) => [term, found[i] ?? { nodes: 0, query: '' }]));
  const alternatives = parsed.alternatives.map((terms) => alternativeOf(terms, lexemes, stats)).filter((alt): alt is Alternative => alt !== null);
  if (alternatives.length === 0) throw new SearchQueryError('query has no words or characters to search for');
  const usesWords = alternatives.some((alt) => alt.usesWords);
  const usesSubstrings = alternatives.some((alt) => alt.usesSubstrings);
  const route: SearchRoute = alternatives.some((alt) => !alt.indexed) ? 'recent-scan' : usesWords && usesSubstrings ? 'mixed' : usesWords ? 'fulltext' : 'trigram';
  const ranks = alternatives.flatMap((alt) => alt.ranks);
  const headline = alternatives.flatMap((alt) => alt.headline);
  return {
    route,
    condition: conditionOf(alternatives),
    everyTermIndexed: conditionOf(parsed.alternatives.map((terms) => alternativeOf(terms, lexemes, stats, false)).filter((alt): alt is Alternative => alt !== null)),
    rank: ranks.length > 0 ? sql`(${sql.join(ranks, sql` + `)})` : sql`0`,
    headlineQuery: headline.length > 0 ? headline.join(' | ') : null,
    substrings: alternatives.flatMap((alt) => alt.substrings),
    // OR: the alternatives' shares add up; one unknown makes the whole unknown.
    share: alternatives.some((alt) => alt.share === null)
      ? null
      : Math.min(
          1,
          alternatives.reduce((sum, alt) => sum + (alt.share ?? 0), 0),
        ),
    prefixPostings: stats === null ? null : alternatives.reduce((sum, alt) => sum + (alt.prefixPostings ?? 0), 0),
  };
}
