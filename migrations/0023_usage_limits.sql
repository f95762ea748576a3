-- Per-person and global limits (docs/security.md, "Limits"; functions/herald_check_limits.sql).

-- Model tokens per person per UTC day, added by every recorded model call of a turn
-- (functions/herald_record_model_call.sql): the daily token limit reads one row, not model_calls.
CREATE TABLE usage_days (
  day date NOT NULL,
  user_id text NOT NULL,
  tokens bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, user_id)
);

-- A person's messages of the last minute, everyone's of the last minute, and a person's open ones.
CREATE INDEX inbound_events_user_received_idx ON inbound_events (user_id, received_at);
CREATE INDEX inbound_events_received_idx ON inbound_events (received_at);
CREATE INDEX inbound_events_user_open_idx ON inbound_events (user_id) WHERE status IN ('pending', 'processing');
