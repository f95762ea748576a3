import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { likePattern, longestWordRun, SearchQueryError, tsqueryOperand } from './search-query.ts';
import type { ParsedQuery, SearchTerm, SubstringTerm, WordTerm } from './search-query.ts';

/**
 * How the query was answered: the tsvector index, the trigram index, both, or a scan of the most
 * recent messages for text no index can serve (1-2 CJK characters, emoji).
 */
export type SearchRoute = 'fulltext' | 'trigram' | 'mixed' | 'recent-scan';

/** The indexed text of a message; the trigram index in migrations/0024_search_scope.sql spells it the same. */
export const SEARCH_TEXT = sql`(m.content || coalesce(' ' || m.tool_text, ''))`;

export interface Plan {
  route: SearchRoute;
  /** A condition on `messages m`. */
  condition: RawBuilder<unknown>;
  rank: RawBuilder<unknown>;
  /** For ts_headline: every positive word operand ORed, or null when there is none. */
  headlineQuery: string | null;
  substrings: string[];
}

/** What the english configuration makes of one word operand: its lexemes, as tsquery text. */
export interface Lexemes {
  nodes: number;
  query: string;
  /** Stems of longer words that begin with the operand (serializ -> serialization -> serial); see stemProbes. */
  stems: string[];
}

/**
 * Endings the English (Porter2) stemmer removes, alone and chained: a word that starts with a
 * query word and ends with one of these may have a stem shorter than the query word.
 */
const STEMMED_ENDINGS = [
  's', 'es', 'ed', 'ing', 'ly', 'e', 'er', 'ers', 'ies', 'ied', 'edly', 'ingly', 'eed', 'eedly',
  'ation', 'ations', 'ational', 'ization', 'izations', 'izer', 'izers', 'ize', 'izes', 'izing', 'ized',
  'ise', 'ising', 'isation', 'ator', 'ators', 'alism', 'ality', 'alities', 'ally', 'alize', 'fulness',
  'ousness', 'iveness', 'ivity', 'ability', 'ableness', 'ness', 'nesses', 'ful', 'less', 'lessly',
  'ously', 'ently', 'ancy', 'ency', 'ably', 'ibly', 'ical', 'ically', 'icate', 'icity', 'ative',
  'al', 'als', 'ance', 'ances', 'ence', 'ences', 'ic', 'ics', 'able', 'ible', 'ant', 'ants', 'ement',
  'ements', 'ment', 'ments', 'ent', 'ents', 'ism', 'isms', 'ist', 'ists', 'ate', 'ates', 'ated', 'ity',
  'ities', 'ous', 'ive', 'ives', 'ion', 'ions', 'tion', 'tions', 'ional', 'tional', 'logy', 'logies',
];

/**
 * Words to stem to learn which shorter stems a word beginning with `word` can have: `word` plus
 * every ending, and, where `word` stops inside an ending (`serializ` in `serialization`), plus
 * the rest of that ending. Stemming these in the database is what the query needs to find
 * `serialization` from `serializ` without reading the text of every row.
 */
export function stemProbes(word: string): string[] {
  const probes = new Set<string>();
  for (const ending of STEMMED_ENDINGS) {
    for (let split = 0; split < ending.length; split++) {
      if (word.endsWith(ending.slice(0, split))) probes.add(word + ending.slice(split));
    }
  }
  return [...probes];
}

/**
 * One statement that returns, per word operand, what `to_tsquery('english', ...)` makes of it
 * and the lexemes of its stem probes, as JSON (a `Lexemes[]` in operand order). A fragment, so
 * the search runs it in the same round trip as the scope lookup.
 */
export function lexemesSql(operands: string[], probes: string[][]): RawBuilder<Lexemes[]> {
  const probeWord = probes.flatMap((list, n) => list.map(() => n + 1));
  const probeText = probes.flat();
  return sql<Lexemes[]>`coalesce((
    SELECT json_agg(json_build_object('nodes', numnode(q), 'query', q::text, 'stems', ARRAY(
             SELECT DISTINCT l.lexeme FROM unnest(${probeWord}::int[], ${probeText}::text[]) AS p(n, word),
                    LATERAL unnest(to_tsvector('english'::regconfig, p.word)) AS l
             WHERE p.n = o.n)) ORDER BY o.n)
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
}

function emptyAlternative(): Alternative {
  return { parts: [], ranks: [], headline: [], substrings: [], usesWords: false, usesSubstrings: false, indexed: false };
}

/** A lexeme quoted for tsquery input, which takes it as it is (no parser, no stemming). */
function quotedLexeme(lexeme: string): string {
  return `'${lexeme.replace(/['\\]/g, (c) => c + c)}'`;
}

/**
 * The stems, among the probes' (stemProbes), shorter than the word and starting it: a word that
 * begins with `text` and is stemmed to one of these is not found by the prefix `text:*`.
 */
function shorterStems(text: string, lexemes: Lexemes | undefined): string[] {
  const word = text.toLowerCase();
  return (lexemes?.stems ?? []).filter((stem) => stem.length < word.length && word.startsWith(stem));
}

/**
 * Word terms. English stems ("deploying" finds "deployment") with every single word a prefix. A
 * prefix the stemmer leaves alone may still begin a word whose stem is shorter (`serializ` and
 * `serialization`, stemmed `serial`): the stem probes name those shorter stems, and rows holding
 * one of them (found by the same tsvector index) must also show the word at a word start in the
 * text. A word no probe shortens (most whole words) is a plain prefix query.
 */
function addWords(alt: Alternative, words: WordTerm[], lexemes: Map<WordTerm, Lexemes>): void {
  const positive = words.filter((term) => !term.negated);
  if (positive.length === 0) {
    if (words.length > 0) {
      // Only excluded words: the exclusion cannot drive an index scan.
      const operands = words.map((t) => tsqueryOperand({ ...t, negated: false })).join(' | ');
      alt.parts.push(sql`NOT (m.search_vector @@ to_tsquery('english'::regconfig, ${operands}))`);
    }
    return;
  }
  const unstemmed = positive.filter((term) => {
    const found = lexemes.get(term);
    return !term.phrase && found?.query === `'${term.text.toLowerCase()}':*` && shorterStems(term.text, found).length > 0;
  });
  const together = words.filter((term) => !unstemmed.includes(term));
  if (together.some((term) => !term.negated)) {
    alt.parts.push(sql`m.search_vector @@ to_tsquery('english'::regconfig, ${together.map(tsqueryOperand).join(' & ')})`);
  } else if (together.length > 0) {
    alt.parts.push(sql`NOT (m.search_vector @@ to_tsquery('english'::regconfig, ${together.map((t) => tsqueryOperand({ ...t, negated: false })).join(' | ')}))`);
  }
  for (const term of unstemmed) {
    const prefix = `${quotedLexeme(term.text.toLowerCase())}:*`;
    const either = [prefix, ...shorterStems(term.text, lexemes.get(term)).map(quotedLexeme)].join(' | ');
    // CASE, not OR: the word-start test only filters what the tsvector index found; as an OR
    // branch the planner would answer it from the trigram index, reading every row with the word.
    alt.parts.push(sql`(m.search_vector @@ ${either}::tsquery
      AND CASE WHEN m.search_vector @@ ${prefix}::tsquery THEN true ELSE ${SEARCH_TEXT} ~* ${wordStartRegex(term.text)} END)`);
  }
  const operands = positive.map((term) => tsqueryOperand(term));
  alt.ranks.push(sql`ts_rank(m.search_vector, to_tsquery('english'::regconfig, ${operands.join(' & ')}))`);
  alt.headline.push(...operands);
  alt.usesWords = true;
  alt.indexed = true;
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

function alternativeOf(terms: SearchTerm[], lexemes: Map<WordTerm, Lexemes>): Alternative | null {
  const alt = emptyAlternative();
  const words = terms.filter((term): term is WordTerm => term.kind === 'word');
  // A negated stop word cannot be excluded by the index and excludes almost everything.
  const stop = words.filter((term) => lexemes.get(term)?.nodes === 0 && !term.negated);
  addWords(alt, words.filter((term) => lexemes.get(term)?.nodes !== 0), lexemes);
  addStopWords(alt, stop);
  addSubstrings(alt, terms.filter((term): term is SubstringTerm => term.kind === 'substring'));
  return alt.usesWords || alt.usesSubstrings ? alt : null;
}

/** The word terms of a query, in the order lexemesSql reports on them. */
export function wordTermsOf(parsed: ParsedQuery): WordTerm[] {
  return parsed.alternatives.flat().filter((term): term is WordTerm => term.kind === 'word');
}

/** lexemesSql for every word term of a query. */
export function queryLexemesSql(parsed: ParsedQuery): RawBuilder<Lexemes[]> {
  const words = wordTermsOf(parsed);
  const probes = words.map((term) => (term.phrase || term.negated ? [] : stemProbes(term.text.toLowerCase())));
  return lexemesSql(words.map((term) => tsqueryOperand({ ...term, negated: false })), probes);
}

/**
 * Turns a parsed query into one condition on `messages m`, a rank, and how indexes serve it;
 * `found` is what queryLexemesSql returned for it.
 */
export function planQuery(parsed: ParsedQuery, found: readonly Lexemes[]): Plan {
  const words = wordTermsOf(parsed);
  const lexemes = new Map(words.map((term, i) => [term, found[i] ?? { nodes: 0, query: '', stems: [] }]));
  const alternatives = parsed.alternatives.map((terms) => alternativeOf(terms, lexemes)).filter((alt): alt is Alternative => alt !== null);
  if (alternatives.length === 0) throw new SearchQueryError('query has no words or characters to search for');
  const usesWords = alternatives.some((alt) => alt.usesWords);
  const usesSubstrings = alternatives.some((alt) => alt.usesSubstrings);
  const route: SearchRoute = alternatives.some((alt) => !alt.indexed)
    ? 'recent-scan'
    : usesWords && usesSubstrings
      ? 'mixed'
      : usesWords
        ? 'fulltext'
        : 'trigram';
  const ranks = alternatives.flatMap((alt) => alt.ranks);
  const headline = alternatives.flatMap((alt) => alt.headline);
  return {
    route,
    condition: sql`(${sql.join(alternatives.map((alt) => sql`(${sql.join(alt.parts, sql` AND `)})`), sql` OR `)})`,
    rank: ranks.length > 0 ? sql`(${sql.join(ranks, sql` + `)})` : sql`0`,
    headlineQuery: headline.length > 0 ? headline.join(' | ') : null,
    substrings: alternatives.flatMap((alt) => alt.substrings),
  };
}
