-- Appends audit entries given as a JSON array of rows (libs/audit auditRowsJson: kind, actor,
-- profile_id, session_id, turn_id, subject, detail), so a caller can write its change and the
-- entries that record it in one statement (herald_record_results). NULL or [] appends nothing.
CREATE OR REPLACE FUNCTION herald_append_audit(p_entries jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_entries IS NULL OR jsonb_array_length(p_entries) = 0 THEN
    RETURN;
  END IF;
  INSERT INTO audit_log (kind, actor, profile_id, session_id, turn_id, subject, detail)
  SELECT e ->> 'kind', e ->> 'actor', e ->> 'profile_id', (e ->> 'session_id')::uuid, (e ->> 'turn_id')::uuid,
         e ->> 'subject', coalesce(e -> 'detail', '{}'::jsonb)
  FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS a(e, n)
  ORDER BY n;
END $$;
