-- Attachments (issue 36; docs/attachments.md). A file that came in or goes out is stored once, by
-- the SHA-256 of its bytes: a redelivered update, the same screenshot sent twice or a file a tool
-- sends again all land on the same row. Bytes live in Postgres, so any worker can read them.
CREATE TABLE blobs (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  -- Sniffed from the bytes, never taken from a file name or a sender's header.
  mime text NOT NULL,
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  data bytea NOT NULL,
  -- A voice note's or audio file's text, kept so a retried update is not transcribed twice.
  transcript text NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- What a message carried, in order; a message's attachments go with it (retention, erasure: the
-- event's deletion cascades here, and herald_prune_blobs drops bytes no row points at any more).
CREATE TABLE event_attachments (
  event_id uuid NOT NULL REFERENCES inbound_events (id) ON DELETE CASCADE,
  position integer NOT NULL CHECK (position >= 0),
  sha256 text NOT NULL REFERENCES blobs (sha256),
  -- The sender's file name, made safe; the workspace copy is attachments/<path>.
  name text NOT NULL,
  path text NOT NULL,
  mime text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('image', 'audio', 'document')),
  size_bytes bigint NOT NULL,
  PRIMARY KEY (event_id, position)
);
CREATE INDEX event_attachments_sha_idx ON event_attachments (sha256);

-- A file going out (send_file, a cron report's files): the outbox row names its blob.
ALTER TABLE outbox ADD COLUMN file jsonb NULL;
CREATE INDEX outbox_file_sha_idx ON outbox ((file ->> 'sha256')) WHERE file IS NOT NULL;
