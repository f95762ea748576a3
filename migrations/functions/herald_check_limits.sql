-- The one place the per-person and global limits are counted (docs/security.md, "Limits"), inside
-- the transaction that would accept a person's message, so every ingress replica counts the same
-- rows. Returns the first limit the message would pass and the seconds until trying again makes
-- sense; no row when it is within every limit. p_limits holds the positive limits by name
-- (turns_per_minute, global_turns_per_minute, concurrent_turns, global_concurrent_turns,
-- tokens_per_day, global_tokens_per_day, attachment_bytes_per_day, global_attachment_bytes_per_day);
-- a missing or zero limit is off. attachment_bytes is not a limit but the message's own files: the
-- attachment allowances refuse only a message that carries some, when they would take the day past it.
CREATE OR REPLACE FUNCTION herald_check_limits(p_user text, p_limits jsonb)
RETURNS TABLE (limit_name text, retry_after integer) LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_day date := (clock_timestamp() AT TIME ZONE 'UTC')::date;
  v_midnight integer := ceil(extract(epoch FROM ((v_day + 1)::timestamp AT TIME ZONE 'UTC') - clock_timestamp()))::integer;
  v_max bigint;
  v_count bigint;
  v_oldest timestamptz;
  v_files bigint := coalesce((p_limits ->> 'attachment_bytes')::bigint, 0);
BEGIN
  IF p_limits IS NULL OR p_limits = '{}'::jsonb THEN
    RETURN;
  END IF;
  -- One person's messages are counted one at a time, so two replicas cannot both let the last one
  -- in. Global counts are not serialised: concurrent arrivals may pass a global limit by as many as
  -- arrive in the same instant.
  PERFORM pg_advisory_xact_lock(hashtext('herald-limits:' || p_user));

  v_max := coalesce((p_limits ->> 'turns_per_minute')::bigint, 0);
  IF v_max > 0 THEN
    SELECT count(*), min(e.received_at) INTO v_count, v_oldest FROM inbound_events e
      WHERE e.user_id = p_user AND e.kind = 'message' AND e.received_at > v_now - interval '1 minute';
    IF v_count >= v_max THEN
      RETURN QUERY SELECT 'turns_per_minute'::text,
        greatest(1, ceil(extract(epoch FROM v_oldest + interval '1 minute' - v_now)))::integer;
      RETURN;
    END IF;
  END IF;

  v_max := coalesce((p_limits ->> 'global_turns_per_minute')::bigint, 0);
  IF v_max > 0 THEN
    SELECT count(*), min(e.received_at) INTO v_count, v_oldest FROM inbound_events e
      WHERE e.received_at > v_now - interval '1 minute' AND e.kind = 'message';
    IF v_count >= v_max THEN
      RETURN QUERY SELECT 'global_turns_per_minute'::text,
        greatest(1, ceil(extract(epoch FROM v_oldest + interval '1 minute' - v_now)))::integer;
      RETURN;
    END IF;
  END IF;

  -- In flight: accepted and not answered yet (waiting for a worker, running, or parked on a person).
  v_max := coalesce((p_limits ->> 'concurrent_turns')::bigint, 0);
  IF v_max > 0 THEN
    SELECT count(*) INTO v_count FROM inbound_events e
      WHERE e.user_id = p_user AND e.status IN ('pending', 'processing') AND e.kind = 'message';
    IF v_count >= v_max THEN
      RETURN QUERY SELECT 'concurrent_turns'::text, 10;
      RETURN;
    END IF;
  END IF;

  v_max := coalesce((p_limits ->> 'global_concurrent_turns')::bigint, 0);
  IF v_max > 0 THEN
    SELECT count(*) INTO v_count FROM inbound_events e
      WHERE e.status IN ('pending', 'processing') AND e.kind = 'message';
    IF v_count >= v_max THEN
      RETURN QUERY SELECT 'global_concurrent_turns'::text, 10;
      RETURN;
    END IF;
  END IF;

  v_max := coalesce((p_limits ->> 'tokens_per_day')::bigint, 0);
  IF v_max > 0 THEN
    SELECT coalesce(sum(u.tokens), 0) INTO v_count FROM usage_days u WHERE u.day = v_day AND u.user_id = p_user;
    IF v_count >= v_max THEN
      RETURN QUERY SELECT 'tokens_per_day'::text, greatest(1, v_midnight);
      RETURN;
    END IF;
  END IF;

  v_max := coalesce((p_limits ->> 'global_tokens_per_day')::bigint, 0);
  IF v_max > 0 THEN
    SELECT coalesce(sum(u.tokens), 0) INTO v_count FROM usage_days u WHERE u.day = v_day;
    IF v_count >= v_max THEN
      RETURN QUERY SELECT 'global_tokens_per_day'::text, greatest(1, v_midnight);
      RETURN;
    END IF;
  END IF;

  -- Files: the bytes the person's accepted messages carried today (usage_days.attachment_bytes, added
  -- when each was accepted) plus this message's. A message without files is never refused by them.
  v_max := coalesce((p_limits ->> 'attachment_bytes_per_day')::bigint, 0);
  IF v_max > 0 AND v_files > 0 THEN
    SELECT coalesce(sum(u.attachment_bytes), 0) INTO v_count FROM usage_days u WHERE u.day = v_day AND u.user_id = p_user;
    IF v_count + v_files > v_max THEN
      RETURN QUERY SELECT 'attachments'::text, greatest(1, v_midnight);
      RETURN;
    END IF;
  END IF;

  v_max := coalesce((p_limits ->> 'global_attachment_bytes_per_day')::bigint, 0);
  IF v_max > 0 AND v_files > 0 THEN
    SELECT coalesce(sum(u.attachment_bytes), 0) INTO v_count FROM usage_days u WHERE u.day = v_day;
    IF v_count + v_files > v_max THEN
      RETURN QUERY SELECT 'global_attachments'::text, greatest(1, v_midnight);
      RETURN;
    END IF;
  END IF;
END $$;
