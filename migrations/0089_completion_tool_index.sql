-- The completion event's check of whether a turn saved a memory or changed a skill
-- (herald_record_completion: the turn's tool results named memory or skill_manage) runs after every
-- turn. With only (session_id, seq) to go by it filtered every message of the session, so the
-- finish grew with the session's length (found by the soak, docs/guarantees.md). Only those two
-- tools' results are indexed: ordinary messages pay nothing for it on insert.
CREATE INDEX messages_knowledge_results_idx ON messages (session_id, turn_id)
  WHERE role = 'tool' AND tool_name IN ('memory', 'skill_manage');
