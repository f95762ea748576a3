-- A streamed answer's draft messages in a chat (docs/decisions/2026-12-06-chat-drafts.md): the
-- platform message ids a running turn posted and keeps editing while its text arrives, keyed by the
-- outbox key its reply will have ('reply:<turn_id>'). The reply's delivery edits these messages into
-- the committed text instead of sending new ones, so a turn resumed on another worker after a crash
-- continues the same messages and ends with one answer. Deleted when that reply is delivered.
CREATE TABLE chat_drafts (
  reply_key text PRIMARY KEY,
  platform text NOT NULL,
  chat_id text NOT NULL,
  message_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_drafts_chat_idx ON chat_drafts (platform, chat_id);
