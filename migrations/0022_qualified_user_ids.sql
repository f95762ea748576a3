-- People are named by platform and id (`telegram:42`, `discord:42`, `api:u1`; libs/core/src/user-id.ts
-- is the one definition): before this file Telegram's person 42 and Discord's person 42 shared memory,
-- search scope and tool-policy entries. Every column that holds a person's id is rewritten here.
-- See docs/decisions/2026-12-02-qualified-user-ids.md.

-- Profile-wide agent notes only where the operator says so; otherwise each person's `memory`
-- writes are their own (libs/knowledge/src/memory-store.ts).
ALTER TABLE profiles ADD COLUMN memory_shared boolean NOT NULL DEFAULT false;

-- Cron jobs first: the sessions and events of scheduled runs are their creator's. A job created in a
-- chat carries that chat in `origin`; one created through the API or an import has none.
UPDATE cron_jobs SET creator_user_id =
  CASE WHEN origin ->> 'platform' IN ('telegram', 'discord', 'api') THEN origin ->> 'platform' ELSE 'api' END
  || ':' || creator_user_id;

-- How the ids of each session are qualified: by its platform; a scheduled run's by its job's
-- (qualified) creator; history imported from Hermes belongs to the API id named at import.
CREATE TEMPORARY TABLE herald_0022_sessions ON COMMIT DROP AS
  SELECT s.id,
         CASE WHEN s.platform IN ('telegram', 'discord', 'api') AND s.session_key NOT LIKE 'hermes:%'
              THEN s.platform ELSE 'api' END AS platform,
         (SELECT j.creator_user_id FROM cron_runs r JOIN cron_jobs j ON j.id = r.job_id
           WHERE r.session_id = s.id LIMIT 1) AS cron_owner
  FROM sessions s;
CREATE UNIQUE INDEX ON herald_0022_sessions (id);

-- Which platforms each bare id wrote from, per profile, for the columns that name no session.
CREATE TEMPORARY TABLE herald_0022_people ON COMMIT DROP AS
  SELECT DISTINCT s.profile_id, e.user_id AS bare, q.platform
  FROM inbound_events e
  JOIN sessions s ON s.id = e.session_id
  JOIN herald_0022_sessions q ON q.id = s.id
  WHERE q.cron_owner IS NULL;

UPDATE sessions s SET origin_user_id = coalesce(q.cron_owner, q.platform || ':' || s.origin_user_id)
  FROM herald_0022_sessions q WHERE q.id = s.id AND s.origin_user_id IS NOT NULL AND s.origin_user_id <> '';

UPDATE inbound_events e SET user_id = coalesce(q.cron_owner, q.platform || ':' || e.user_id)
  FROM herald_0022_sessions q WHERE q.id = e.session_id;

-- 'timeout' marks a wait that lapsed: no person answered it.
UPDATE tool_waits w SET answered_by = q.platform || ':' || w.answered_by
  FROM herald_0022_sessions q WHERE q.id = w.session_id AND w.answered_by IS NOT NULL AND w.answered_by <> 'timeout';

UPDATE session_approvals a SET approved_by = q.platform || ':' || a.approved_by
  FROM herald_0022_sessions q WHERE q.id = a.session_id;

UPDATE tool_refusals t SET user_id = coalesce(q.cron_owner, q.platform || ':' || t.user_id)
  FROM herald_0022_sessions q WHERE q.id = t.session_id AND t.user_id <> '';

UPDATE reviews r SET user_id = coalesce(q.cron_owner, q.platform || ':' || r.user_id)
  FROM herald_0022_sessions q WHERE q.id = r.session_id AND r.user_id <> '';

-- A person's user profile: where one bare id wrote from two platforms, both people saw the same
-- entries until now; each keeps a copy (no one gains a view they did not have), and from here on
-- they diverge. An id that never wrote (imported, or set through the API) is the API's.
CREATE TEMPORARY TABLE herald_0022_memory ON COMMIT DROP AS
  SELECT m.id, m.user_id AS bare, coalesce(p.platform, 'api') AS platform,
         row_number() OVER (PARTITION BY m.id ORDER BY p.platform) AS n
  FROM memory_entries m
  LEFT JOIN herald_0022_people p ON p.profile_id = m.profile_id AND p.bare = m.user_id
  WHERE m.user_id <> '';

UPDATE memory_entries m SET user_id = c.platform || ':' || c.bare
  FROM herald_0022_memory c WHERE c.id = m.id AND c.n = 1;

INSERT INTO memory_entries (profile_id, store, user_id, content, created_at, updated_at)
  SELECT m.profile_id, m.store, c.platform || ':' || c.bare, m.content, m.created_at, m.updated_at
  FROM herald_0022_memory c JOIN memory_entries m ON m.id = c.id
  WHERE c.n > 1
  ORDER BY m.id, c.n;

-- Per-person tool-policy entries: a bare key meant that id on every platform, so it becomes one
-- key per platform the id wrote from (the API's when none).
UPDATE profiles pr SET tool_policy = jsonb_set(pr.tool_policy, '{users}', (
    SELECT coalesce(jsonb_object_agg(coalesce(p.platform, 'api') || ':' || u.key, u.value), '{}'::jsonb)
    FROM jsonb_each(pr.tool_policy -> 'users') u
    LEFT JOIN herald_0022_people p ON p.profile_id = pr.id AND p.bare = u.key))
  WHERE jsonb_typeof(pr.tool_policy -> 'users') = 'object';
