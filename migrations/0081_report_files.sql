-- A cron report's files (issue 36 point 3; docs/attachments.md). A scheduled run has no chat, so the
-- files send_file is given during the run wait on the run, then go out with its report.
ALTER TABLE cron_runs ADD COLUMN files jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Files that travel inside the message itself where the platform has no file message of its own
-- (an e-mail's attachments); a chat gets each file as a row of its own instead (the `file` column).
ALTER TABLE outbox ADD COLUMN attachments jsonb NOT NULL DEFAULT '[]'::jsonb;
