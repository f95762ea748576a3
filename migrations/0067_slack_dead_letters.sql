-- Slack events (Socket Mode envelopes, Events API requests, interactions) that fail the same way
-- twice are dead letters too.
ALTER TABLE dead_letters DROP CONSTRAINT dead_letters_source_check;
ALTER TABLE dead_letters ADD CONSTRAINT dead_letters_source_check CHECK (source IN ('telegram_update', 'discord_event', 'slack_event', 'run'));
