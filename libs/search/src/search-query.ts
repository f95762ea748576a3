/**
 * Parses a person's or a model's search text into terms. Nothing here reaches SQL as syntax: word
 * terms are reduced to letters, digits and `_ . / @ -` before they become quoted tsquery operands,
 * and everything is bound as a parameter.
 */

/** Longer queries are refused (Hermes caps FTS queries at the same length). */
export const MAX_QUERY_CHARS = 2048;
/** More terms than this are refused: each one is a condition in the plan. */
export const MAX_QUERY_TERMS = 32;

export interface WordTerm {
  kind: 'word';
  /** Letters, digits and `_ . / @ -`, words separated by one space. */
  text: string;
  /** A quoted phrase: words must be adjacent, no prefix matching. */
  phrase: boolean;
  negated: boolean;
}

export interface SubstringTerm {
  kind: 'substring';
  text: string;
  negated: boolean;
}

export type SearchTerm = WordTerm | SubstringTerm;

/** Alternatives joined by OR; the terms of one alternative are joined by AND. */
export interface ParsedQuery {
  alternatives: SearchTerm[][];
}

/** A query that cannot be searched; `message` names what to change. */
export class SearchQueryError extends Error {
  override readonly name = 'SearchQueryError';
  static isInstance(error: unknown): error is SearchQueryError {
    return error instanceof Error && error.name === 'SearchQueryError';
  }
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー々〆]+/gu;
const WORD_CHARS = /[^\p{L}\p{N}_./@-]+/gu;
const EDGE_PUNCTUATION = /^[_./@-]+|[_./@-]+$/gu;

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/** The count of characters pg_trgm can index in a row: a substring needs 3 to use the index. */
export function longestWordRun(text: string): number {
  let best = 0;
  for (const run of text.match(/[\p{L}\p{N}]+/gu) ?? []) best = Math.max(best, [...run].length);
  return best;
}

function cleanWords(text: string): string {
  return text
    .replace(WORD_CHARS, ' ')
    .split(' ')
    .map((word) => word.replace(EDGE_PUNCTUATION, ''))
    .filter((word) => word.length > 0)
    .join(' ');
}

/** Splits one token into CJK substrings, words, and symbols (emoji) that only a substring can find. */
function termsOf(token: string, negated: boolean, phrase: boolean): SearchTerm[] {
  const terms: SearchTerm[] = [];
  for (const run of token.match(CJK_RUN) ?? []) terms.push({ kind: 'substring', text: run, negated });
  const rest = token.replace(CJK_RUN, ' ');
  const words = cleanWords(rest);
  if (words.length > 0) {
    terms.push({ kind: 'word', text: words, phrase: phrase || words.includes(' '), negated });
  } else if (terms.length === 0) {
    // Emoji and other symbols: no word to stem, but a substring still finds them.
    const symbols = rest.replace(/[\s\p{P}]+/gu, '');
    if (/[\p{S}\p{L}\p{N}]/u.test(symbols)) terms.push({ kind: 'substring', text: rest.trim(), negated });
  }
  return terms;
}

interface Token {
  text: string;
  quoted: boolean;
}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const char = query[i] ?? '';
    if (/\s/u.test(char)) {
      i++;
      continue;
    }
    const negated = char === '-' && query[i + 1] === '"';
    const quoteAt = negated ? i + 1 : i;
    if (query[quoteAt] === '"') {
      const end = query.indexOf('"', quoteAt + 1);
      // An unbalanced quote is a stray character: the rest is read as plain words.
      if (end === -1) {
        i = quoteAt + 1;
        continue;
      }
      tokens.push({ text: `${negated ? '-' : ''}${query.slice(quoteAt + 1, end)}`, quoted: true });
      i = end + 1;
      continue;
    }
    let end = i;
    while (end < query.length && !/\s/u.test(query[end] ?? '') && query[end] !== '"') end++;
    tokens.push({ text: query.slice(i, end), quoted: false });
    i = end;
  }
  return tokens;
}

/**
 * Websearch-style syntax: words are ANDed, `"quoted phrases"`, `OR` (or `|`) between
 * alternatives, `-word` or `NOT word` excludes. CJK runs become substring terms, so mixed
 * queries work. Throws SearchQueryError when nothing searchable is left.
 */
export function parseSearchQuery(query: string): ParsedQuery {
  if (query.length > MAX_QUERY_CHARS) {
    throw new SearchQueryError(`query is ${query.length} characters; the limit is ${MAX_QUERY_CHARS}`);
  }
  const alternatives: SearchTerm[][] = [[]];
  let negateNext = false;
  let excluded = 0;
  for (const token of tokenize(query.normalize('NFKC'))) {
    if (!token.quoted && (token.text === 'OR' || token.text === '|')) {
      if ((alternatives.at(-1) ?? []).length > 0) alternatives.push([]);
      continue;
    }
    if (!token.quoted && token.text === 'AND') continue;
    if (!token.quoted && token.text === 'NOT') {
      negateNext = true;
      continue;
    }
    let text = token.text;
    let negated = negateNext;
    negateNext = false;
    if (text.startsWith('-') && text.length > 1) {
      negated = true;
      text = text.slice(1);
    }
    const terms = termsOf(text, negated, token.quoted);
    alternatives.at(-1)?.push(...terms);
  }
  const kept = alternatives.filter((terms) => {
    const positive = terms.some((term) => !term.negated);
    if (!positive && terms.length > 0) excluded++;
    return positive;
  });
  if (kept.length === 0) {
    throw new SearchQueryError(excluded > 0 ? 'query only excludes words; add at least one word or phrase to find' : 'query has no words or characters to search for');
  }
  const count = kept.reduce((sum, terms) => sum + terms.length, 0);
  if (count > MAX_QUERY_TERMS) throw new SearchQueryError(`query has ${count} terms; the limit is ${MAX_QUERY_TERMS}`);
  return { alternatives: kept };
}

/** A quoted tsquery operand: the cleaned text cannot contain quotes, backslashes or operators. */
export function tsqueryOperand(term: WordTerm): string {
  const operand = `'${term.text}'`;
  return `${term.negated ? '!' : ''}${operand}${term.phrase ? '' : ':*'}`;
}

/** `'%text%'` for ILIKE, with LIKE's own wildcards escaped (backslash is the default escape). */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
