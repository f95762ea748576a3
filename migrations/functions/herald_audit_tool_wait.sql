-- Approvals in the audit trail: the request when a turn parks on a person (herald_suspend_turn's
-- insert) and the answer, with who gave it, when it is resolved (herald_resolve_wait, expireWaits),
-- each in the transaction that makes the change. Clarifying questions are not approvals: left out.
CREATE OR REPLACE FUNCTION herald_audit_tool_wait() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind <> 'approval' THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO audit_log (kind, actor, profile_id, session_id, turn_id, subject, detail)
    SELECT 'approval_request', NULL, s.profile_id, NEW.session_id, NEW.turn_id, NEW.tool_name,
           jsonb_build_object('wait_id', NEW.id, 'tool_call_id', NEW.tool_call_id, 'prompt', NEW.prompt,
                              'arguments', 'sha256:' || encode(sha256(convert_to(NEW.arguments, 'UTF8')), 'hex'))
    FROM sessions s WHERE s.id = NEW.session_id;
  ELSIF OLD.status = 'pending' AND NEW.status <> 'pending' THEN
    INSERT INTO audit_log (kind, actor, profile_id, session_id, turn_id, subject, detail)
    SELECT 'approval_answer', NEW.answered_by, s.profile_id, NEW.session_id, NEW.turn_id, NEW.tool_name,
           jsonb_build_object('wait_id', NEW.id, 'tool_call_id', NEW.tool_call_id, 'status', NEW.status)
    FROM sessions s WHERE s.id = NEW.session_id;
  END IF;
  RETURN NULL;
END;
$$;
