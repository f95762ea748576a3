-- What a session brought from another agent (herald import hermes) that Herald's own sessions
-- record elsewhere (model_calls per call, end_reason from Herald's own four): kept on the row so
-- nothing upstream wrote is dropped, and written back by herald export hermes.
ALTER TABLE sessions
  -- The model the session ran on upstream.
  ADD COLUMN model text,
  -- Upstream's end reason as written (agent_close, session_reset, ...); end_reason keeps Herald's
  -- meaning of it where there is one.
  ADD COLUMN imported_end_reason text,
  -- Token counts, API calls and costs upstream summed for the session (its sessions row).
  ADD COLUMN imported_usage jsonb;

-- A message's reasoning text and its id on the platform it came from.
ALTER TABLE messages
  ADD COLUMN reasoning text,
  ADD COLUMN platform_message_id text;
