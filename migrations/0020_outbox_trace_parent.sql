-- The W3C traceparent of the turn that wrote an outbox row, so its delivery joins the turn's trace.
-- Rows take it from a transaction-local setting (set_config('herald.trace_parent', ..., true)) that
-- a worker sets only when tracing is on; otherwise it stays NULL and costs nothing.
ALTER TABLE outbox
  ADD COLUMN trace_parent text NULL DEFAULT nullif(current_setting('herald.trace_parent', true), '');
