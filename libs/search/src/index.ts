export { searchHistory, substringSnippet, SEARCH_SORTS, SEARCH_SCAN_ROWS, MAX_SEARCH_LIMIT, MAX_HITS_PER_SESSION } from './history-search.ts';
export type { SearchHit, SearchOptions, SearchResult, SearchSort, SessionResult } from './history-search.ts';
export { CANDIDATE_ROWS, CANDIDATE_WALK_ROWS, MIN_CANDIDATE_ROWS, RECENT_SCAN_WINDOW } from './search-candidates.ts';
export type { SearchRoute } from './search-plan.ts';
export { canSeeSession, messageVisible, visibleSessions } from './search-scope.ts';
export type { SearchScope } from './search-scope.ts';
export { parseSearchQuery, SearchQueryError, MAX_QUERY_CHARS, MAX_QUERY_TERMS } from './search-query.ts';
export type { ParsedQuery, SearchTerm } from './search-query.ts';
