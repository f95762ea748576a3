-- Everything of a person's (`herald people export`), as one JSON document: sessions with their
-- messages, memory, skills they created, cron jobs and usage, under any of their ids (`keys`).
CREATE OR REPLACE FUNCTION herald_person_data(keys text[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'sessions', coalesce((
      SELECT jsonb_agg(jsonb_build_object(
        'session_id', s.id, 'profile', s.profile_id, 'platform', s.platform, 'chat_type', s.chat_type,
        'chat_id', s.chat_id, 'title', s.title, 'created_at', s.created_at, 'ended_at', s.ended_at,
        'messages', coalesce((
          SELECT jsonb_agg(jsonb_build_object('seq', m.seq, 'role', m.role, 'content', m.content,
                   'tool_name', m.tool_name, 'created_at', m.created_at) ORDER BY m.seq)
            FROM messages m WHERE m.session_id = s.id), '[]'::jsonb)
      ) ORDER BY s.created_at)
      FROM sessions s WHERE s.origin_user_id = ANY (keys)), '[]'::jsonb),
    'memory', coalesce((
      SELECT jsonb_agg(jsonb_build_object('id', e.id, 'profile', e.profile_id, 'store', e.store,
               'content', e.content, 'created_at', e.created_at, 'updated_at', e.updated_at) ORDER BY e.id)
        FROM memory_entries e WHERE e.user_id = ANY (keys)), '[]'::jsonb),
    'skills', coalesce((
      SELECT jsonb_agg(jsonb_build_object('profile', k.profile_id, 'name', k.name, 'description', k.description,
               'version', k.version, 'files', v.files, 'created_at', k.created_at) ORDER BY k.name)
        FROM skills k LEFT JOIN skill_versions v ON v.profile_id = k.profile_id AND v.name = k.name AND v.version = k.version
       WHERE k.created_by = ANY (keys) AND k.deleted_at IS NULL), '[]'::jsonb),
    'cron_jobs', coalesce((
      SELECT jsonb_agg(jsonb_build_object('id', j.id, 'profile', j.profile_id, 'name', j.name, 'schedule', j.schedule,
               'prompt', j.prompt, 'enabled', j.enabled, 'created_at', j.created_at) ORDER BY j.created_at)
        FROM cron_jobs j WHERE j.creator_user_id = ANY (keys)), '[]'::jsonb),
    'usage', coalesce((
      SELECT jsonb_agg(jsonb_build_object('day', u.day, 'tokens', u.tokens, 'attachment_bytes', u.attachment_bytes) ORDER BY u.day)
        FROM (SELECT day, sum(tokens) AS tokens, sum(attachment_bytes) AS attachment_bytes
                FROM usage_days WHERE user_id = ANY (keys) GROUP BY day) u), '[]'::jsonb)
  );
$$;
