-- History search reads a person's matches newest period first (docs/decisions/2026-12-06-search-periods.md).
-- GIN cannot return rows in time order, so a term too sparse for the walk of the newest messages
-- fetched every one of its matches from the heap to find the newest hundred. With the message's
-- period of 28 days inside both composite GIN indexes, one index scan per period (newest first)
-- returns only that period's matches, and the search stops at the period that completes its
-- candidates. The period is an expression of created_at, not a column: no table rewrite, one more
-- GIN entry per message and index. The expression is spelled the same in
-- libs/search/src/search-periods.ts (periodOf); the planner uses the index only for the identical
-- expression.
CREATE INDEX messages_scope_vector_period_idx ON messages
  USING gin (owner_id, session_id,
    (floor(extract(epoch FROM created_at - timestamptz '2000-01-01 00:00:00+00') / 2419200)::int), search_vector);
CREATE INDEX messages_scope_trgm_period_idx ON messages
  USING gin (owner_id, session_id,
    (floor(extract(epoch FROM created_at - timestamptz '2000-01-01 00:00:00+00') / 2419200)::int),
    (content || coalesce(' ' || tool_text, '')) gin_trgm_ops);
DROP INDEX messages_scope_vector_idx;
DROP INDEX messages_scope_trgm_idx;
ALTER INDEX messages_scope_vector_period_idx RENAME TO messages_scope_vector_idx;
ALTER INDEX messages_scope_trgm_period_idx RENAME TO messages_scope_trgm_idx;
