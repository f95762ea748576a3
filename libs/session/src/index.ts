export { createDb, createPool, ensureDatabase, withDefaultUser } from './db.ts';
export type { Db, DbOptions } from './db.ts';
export { migrate, MIGRATIONS_DIR } from './migrate.ts';
export type { MigrationResult } from './migrate.ts';
export { SCHEMA_COLUMNS } from './schema.ts';
export type {
  Database,
  EventStatus,
  MessageRole,
  MemoryStore,
  QueueMode,
  StoredToolCall,
  TurnStatus,
} from './schema.ts';
export { sessionKey } from './session-key.ts';
export type { RouteAddress } from './session-key.ts';
export { acceptInbound, getEvent, openInbox, parseCommand, BacklogFullError, NEW_SESSION_REPLY, QUEUE_MODES } from './inbox.ts';
export type { AcceptedEvent, AcceptOptions, EventView, Inbox, InboundMessage, PendingEvent, SessionControl } from './inbox.ts';
export { claimLease, renewLease, releaseLease, fenced, LeaseLostError } from './leases.ts';
export type { Lease, LeasedSession } from './leases.ts';
export { appendMessages, loadTranscript } from './transcript.ts';
export type { NewMessage, StoredMessage } from './transcript.ts';
export { findStrandedSessions } from './stranded.ts';
export type { StrandedSession } from './stranded.ts';
export { isConnectionError } from './infra-errors.ts';
export { startTurn, resumeTurn, recordStep, finishTurn } from './turn-store.ts';
export type { ModelCallRow, TurnEnd } from './turn-store.ts';
export { readMemory, writeMemory, deleteMemoryEntry, usageOf } from './memory-store.ts';
export type { MemoryEntry, MemoryOperation, MemoryScope, MemoryState, MemoryWriteResult } from './memory-store.ts';
export { loadPromptSources } from './prompt-sources.ts';
export type { PromptSources } from './prompt-sources.ts';
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
