-- Who may answer a wait (an approval or a clarify question): the person whose message the parked
-- turn is answering (every author of its events, for a turn that took several messages at once), or
-- an operator listed by id (HERALD_OPERATORS). Ids are qualified by platform (`telegram:42`), so a
-- member of a group chat who happens to share a bare id with the requester is still someone else.
CREATE OR REPLACE FUNCTION herald_may_answer_wait(p_wait uuid, p_by text, p_operators text[])
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT p_by = ANY (coalesce(p_operators, '{}'))
      OR EXISTS (SELECT 1 FROM tool_waits w JOIN inbound_events e ON e.turn_id = w.turn_id
                 WHERE w.id = p_wait AND e.user_id = p_by)
$$;
