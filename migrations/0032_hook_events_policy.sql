-- Hook events fired outside a turn, the remaining admin changes in the audit trail, and Discord
-- gateway events as dead letters (issues 24 and 17; docs/hooks.md, docs/security.md,
-- docs/decisions/2026-12-02-hook-events-outside-turns.md).

-- Events for the hooks that happen in a transaction no hook may run in (a cron occurrence firing,
-- an outbox delivery giving up). The write that makes the event also writes its row here
-- (herald_queue_hook_event, a trigger), so the event exists exactly when the change committed; the
-- scheduler fires each row's hooks under the row's lock and deletes the row with the audit of
-- what the hooks decided (services/scheduler/src/hook-events.ts). `key` names what fired
-- (cron_fire:<run id>), so a fire written twice is one event.
CREATE TABLE hook_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  event text NOT NULL CHECK (event IN ('cron_fire', 'delivery_failed')),
  key text NOT NULL UNIQUE,
  profile_id text NULL,
  session_id uuid NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX hook_events_created_idx ON hook_events (created_at);

-- A run starts (scheduled, missed or manual): cron_fire.
CREATE TRIGGER cron_runs_hook_event AFTER UPDATE OF status ON cron_runs
  FOR EACH ROW WHEN (NEW.status = 'running' AND OLD.status IS DISTINCT FROM 'running')
  EXECUTE FUNCTION herald_queue_hook_event();
-- A delivery gives up (its retry budget spent, or refused for good): delivery_failed.
CREATE TRIGGER outbox_hook_event AFTER UPDATE OF status ON outbox
  FOR EACH ROW WHEN (NEW.status = 'failed' AND OLD.status IS DISTINCT FROM 'failed')
  EXECUTE FUNCTION herald_queue_hook_event();

-- Admin changes the 0029 triggers did not see: a skill pinned or unpinned, a profile document
-- (SOUL.md, AGENTS.md, ...) written or removed (herald_audit_admin_change).
CREATE TRIGGER skills_pin_audit AFTER UPDATE OF pinned ON skills
  FOR EACH ROW WHEN (NEW.pinned IS DISTINCT FROM OLD.pinned)
  EXECUTE FUNCTION herald_audit_admin_change();
CREATE TRIGGER profile_documents_audit AFTER INSERT OR DELETE OR UPDATE OF content ON profile_documents
  FOR EACH ROW EXECUTE FUNCTION herald_audit_admin_change();

-- Discord gateway events that fail the same way twice are dead letters too.
ALTER TABLE dead_letters DROP CONSTRAINT dead_letters_source_check;
ALTER TABLE dead_letters ADD CONSTRAINT dead_letters_source_check CHECK (source IN ('telegram_update', 'discord_event', 'run'));
