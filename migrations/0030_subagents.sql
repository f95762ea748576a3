-- Subagents (docs/subagents.md): delegate_task runs each task as a child session with its own turn,
-- on the ordinary run queue, while the parent's turn is parked on a wait of kind 'subagents'.

-- A child session names the session that delegated to it: it is a subagent (hidden from session
-- lists and search unless asked for) and goes with its parent.
ALTER TABLE sessions
  ADD COLUMN delegated_from uuid REFERENCES sessions (id) ON DELETE CASCADE,
  -- Tokens of the subagents this session delegated to (and theirs), added when each child ends.
  ADD COLUMN delegated_input_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN delegated_output_tokens bigint NOT NULL DEFAULT 0;
CREATE INDEX sessions_delegated_from_idx ON sessions (delegated_from) WHERE delegated_from IS NOT NULL;

ALTER TABLE tool_waits DROP CONSTRAINT tool_waits_kind_check;
ALTER TABLE tool_waits ADD CONSTRAINT tool_waits_kind_check CHECK (kind IN ('approval', 'clarify', 'subagents'));

-- One child run per delegated task. The child session's one turn does the work; the trigger on
-- turns (herald_subagent_turn_ended) records how it ended in the same transaction as the turn's end.
CREATE TABLE subagent_runs (
  id uuid PRIMARY KEY,
  parent_session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  parent_turn_id uuid NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
  tool_call_id text NOT NULL,
  -- The parked parent's wait (foreground), or NULL for a background child.
  wait_id uuid,
  task_index integer NOT NULL,
  child_session_id uuid NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
  goal text NOT NULL,
  context text,
  role text NOT NULL CHECK (role IN ('leaf', 'orchestrator')),
  -- The tools the child may use: its requested toolsets within the parent's, minus the blocked ones.
  tools text[] NOT NULL,
  depth integer NOT NULL,
  max_iterations integer NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'cancelled')),
  exit_reason text CHECK (exit_reason IN ('completed', 'max_iterations', 'interrupted', 'error', 'timeout')),
  -- The person whose turn delegated: the child's event is theirs (limits, hooks).
  user_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  finished_at timestamptz,
  UNIQUE (parent_turn_id, tool_call_id, task_index)
);
CREATE INDEX subagent_runs_wait_idx ON subagent_runs (wait_id) WHERE wait_id IS NOT NULL;
CREATE INDEX subagent_runs_parent_idx ON subagent_runs (parent_session_id, created_at);
CREATE INDEX subagent_runs_open_idx ON subagent_runs (created_at) WHERE status IN ('queued', 'running');

CREATE TRIGGER turns_subagent_ended AFTER UPDATE OF status ON turns
  FOR EACH ROW WHEN (NEW.status IN ('done', 'failed') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION herald_subagent_turn_ended();
CREATE TRIGGER turns_subagent_started AFTER INSERT ON turns
  FOR EACH ROW EXECUTE FUNCTION herald_subagent_turn_ended();
