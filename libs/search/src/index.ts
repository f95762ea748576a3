export {
  searchHistory,
  visibleSessions,
  canSeeSession,
  substringSnippet,
  SEARCH_SORTS,
  SEARCH_SCAN_ROWS,
  RECENT_SCAN_WINDOW,
  MAX_SEARCH_LIMIT,
  MAX_HITS_PER_SESSION,
} from './history-search.ts';
export type { SearchHit, SearchOptions, SearchResult, SearchRoute, SearchScope, SearchSort, SessionResult } from './history-search.ts';
export { parseSearchQuery, SearchQueryError, MAX_QUERY_CHARS, MAX_QUERY_TERMS } from './search-query.ts';
export type { ParsedQuery, SearchTerm } from './search-query.ts';
