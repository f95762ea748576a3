-- Limits count delegated work (docs/subagents.md, "Limits"): a child run the person's limits
-- refuse before it starts is recorded as done with exit reason 'refused' and the reason the person
-- would be told, so the parent reports it as a refusal, not an error; a child stopped by the token
-- budget mid-run ends 'refused' too (herald_subagent_turn_ended).
ALTER TABLE subagent_runs DROP CONSTRAINT subagent_runs_exit_reason_check;
ALTER TABLE subagent_runs ADD CONSTRAINT subagent_runs_exit_reason_check
  CHECK (exit_reason IN ('completed', 'max_iterations', 'interrupted', 'error', 'timeout', 'refused'));
ALTER TABLE subagent_runs ADD COLUMN refusal text;
