-- Every dead letter in one list, newest first: what failed for good and why. Platform updates and
-- run jobs that failed the same way twice (dead_letters); deliveries out of attempts (outbox);
-- reviews whose pg-boss job was dead-lettered or ran out of attempts (reviews); cron jobs paused
-- after failures or a dead-lettered fire (cron_jobs). Read by GET /v1/admin/dead-letters,
-- GET /v1/admin/status and `herald dead-letters`.
CREATE OR REPLACE FUNCTION herald_dead_letters(max_rows integer)
RETURNS TABLE (kind text, id text, reason text, failures integer, session_id uuid, failed_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT * FROM (
    SELECT d.source, d.key, d.reason, d.failures, d.session_id, d.last_failed_at
      FROM dead_letters d WHERE d.status = 'dead'
    UNION ALL
    SELECT 'delivery', o.id::text, coalesce(o.last_error, 'failed'), o.attempts, o.session_id, o.next_attempt_at
      FROM outbox o WHERE o.status = 'failed'
    UNION ALL
    SELECT 'review', r.id::text, coalesce(r.error, 'failed'), r.attempts, r.session_id, coalesce(r.finished_at, r.created_at)
      FROM reviews r WHERE r.status = 'failed'
    UNION ALL
    SELECT 'cron_job', j.id::text, j.paused_reason, j.consecutive_failures, NULL::uuid, j.updated_at
      FROM cron_jobs j WHERE NOT j.enabled AND j.paused_reason IS NOT NULL
  ) AS letters (kind, id, reason, failures, session_id, failed_at)
  ORDER BY failed_at DESC
  LIMIT max_rows;
$$;
