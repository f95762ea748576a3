-- Lifecycle hooks and the audit trail (docs/hooks.md, docs/decisions/2026-12-02-hooks-audit.md).

-- Append-only record of who did what: tool calls, approvals, hook decisions, admin changes and
-- refusals, each written in the transaction of the change it records. herald_audit_append_only
-- refuses UPDATE, DELETE and TRUNCATE; only herald_prune_audit (the retention sweep) may delete.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind text NOT NULL CHECK (kind IN ('tool_call', 'approval_request', 'approval_answer', 'hook_decision', 'admin_change', 'refusal')),
  -- The person (platform user id) or 'api' for a change through the API token; NULL for Herald itself.
  actor text NULL,
  profile_id text NULL,
  session_id uuid NULL,
  turn_id uuid NULL,
  -- What it is about: a tool name, a hook name, 'cron:<job id>', 'profile:<id>'.
  subject text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_at_idx ON audit_log (at, id);
CREATE INDEX audit_log_session_idx ON audit_log (session_id, id) WHERE session_id IS NOT NULL;
CREATE INDEX audit_log_actor_idx ON audit_log (actor, id) WHERE actor IS NOT NULL;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION herald_audit_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION herald_audit_append_only();

-- Hook events that fire once per tool call of a turn: a resumed turn finds the directive here
-- instead of asking the hooks again (exactly once across crash recovery).
CREATE TABLE hook_firings (
  turn_id uuid NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
  tool_call_id text NOT NULL,
  event text NOT NULL,
  directive jsonb NULL,
  fired_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (turn_id, tool_call_id, event)
);

-- Per-profile hooks set through the API (url and command kinds only), after the file's hooks.
CREATE TABLE profile_hooks (
  profile_id text PRIMARY KEY REFERENCES profiles (id) ON DELETE CASCADE,
  hooks jsonb NOT NULL DEFAULT '[]'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Approval requests and answers reach the trail from the tool_waits writes themselves.
CREATE TRIGGER tool_waits_audit AFTER INSERT OR UPDATE OF status ON tool_waits
  FOR EACH ROW EXECUTE FUNCTION herald_audit_tool_wait();

-- Admin changes of cron jobs, skills and memory reach the trail from the writes themselves
-- (migrations/functions/herald_audit_admin_change.sql). A cron job's bookkeeping columns (next
-- run, failures) are not admin changes: only the columns a person sets are watched.
CREATE TRIGGER cron_jobs_audit AFTER INSERT OR DELETE OR UPDATE OF name, prompt, schedule, timezone, session_name, skills, toolsets, targets, enabled, missed_policy ON cron_jobs
  FOR EACH ROW EXECUTE FUNCTION herald_audit_admin_change();
CREATE TRIGGER skill_versions_audit AFTER INSERT ON skill_versions
  FOR EACH ROW EXECUTE FUNCTION herald_audit_admin_change();
CREATE TRIGGER memory_entries_audit AFTER INSERT OR DELETE OR UPDATE OF content ON memory_entries
  FOR EACH ROW EXECUTE FUNCTION herald_audit_admin_change();
