-- A person's daily attachment allowance (HERALD_LIMIT_ATTACHMENT_MB_PER_DAY; docs/security.md,
-- "Limits"): the bytes of the files a person's accepted messages carried, per UTC day, added in the
-- transaction that accepts the message (libs/session attachment-allowance.ts) and read by
-- functions/herald_check_limits.sql. Kept beside the day's tokens so the check reads one row, and
-- so deleting a message (retention, a session's erasure) does not hand its bytes back to the day.
ALTER TABLE usage_days ADD COLUMN attachment_bytes bigint NOT NULL DEFAULT 0;

-- A transcript page names the files of its user messages (GET /v1/sessions/:id/messages): found
-- through the events of the page's turns (libs/attachments messageAttachments), by turn.
CREATE INDEX inbound_events_turn_idx ON inbound_events (turn_id) WHERE turn_id IS NOT NULL;
