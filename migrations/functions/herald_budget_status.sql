-- The money budgets that apply to a person's call in a profile, with what is spent against each:
-- one row per budget that is on (person and profile, UTC day and month), with the seconds until it
-- renews. A budget is the budgets row of the person (herald_usage_person) or the profile, else the
-- default in p_defaults ({person_day, person_month, profile_day, profile_month}, from
-- HERALD_BUDGET_*); 0 is off. Read by herald_accept_message (refusal), before each model call, for
-- the 80% warning and for /usage.
CREATE OR REPLACE FUNCTION herald_budget_status(p_user text, p_profile text, p_defaults jsonb)
RETURNS TABLE (scope text, subject text, period text, period_start date, budget numeric, spent numeric, retry_after integer)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_person text := herald_usage_person(p_user);
  v_day date := (clock_timestamp() AT TIME ZONE 'UTC')::date;
  v_month date := date_trunc('month', (clock_timestamp() AT TIME ZONE 'UTC'))::date;
  v_to_day integer := greatest(1, ceil(extract(epoch FROM ((v_day + 1)::timestamp AT TIME ZONE 'UTC') - clock_timestamp())))::integer;
  v_to_month integer := greatest(1, ceil(extract(epoch FROM ((v_month + interval '1 month')::timestamp AT TIME ZONE 'UTC') - clock_timestamp())))::integer;
  v_day_budget numeric;
  v_month_budget numeric;
  v_day_spent numeric;
  v_month_spent numeric;
BEGIN
  SELECT coalesce(b.per_day, (p_defaults ->> 'person_day')::numeric, 0), coalesce(b.per_month, (p_defaults ->> 'person_month')::numeric, 0)
    INTO v_day_budget, v_month_budget
    FROM (SELECT 1) one LEFT JOIN budgets b ON b.scope = 'person' AND b.subject = v_person;
  IF v_day_budget > 0 OR v_month_budget > 0 THEN
    SELECT coalesce(sum(u.cost_usd) FILTER (WHERE u.day = v_day), 0), coalesce(sum(u.cost_usd), 0) INTO v_day_spent, v_month_spent
      FROM usage_costs u WHERE u.day >= v_month AND u.day <= v_day AND herald_usage_person(u.user_id) = v_person;
    IF v_day_budget > 0 THEN
      RETURN QUERY SELECT 'person'::text, v_person, 'day'::text, v_day, v_day_budget, v_day_spent, v_to_day;
    END IF;
    IF v_month_budget > 0 THEN
      RETURN QUERY SELECT 'person'::text, v_person, 'month'::text, v_month, v_month_budget, v_month_spent, v_to_month;
    END IF;
  END IF;
  IF p_profile IS NULL THEN
    RETURN;
  END IF;
  SELECT coalesce(b.per_day, (p_defaults ->> 'profile_day')::numeric, 0), coalesce(b.per_month, (p_defaults ->> 'profile_month')::numeric, 0)
    INTO v_day_budget, v_month_budget
    FROM (SELECT 1) one LEFT JOIN budgets b ON b.scope = 'profile' AND b.subject = p_profile;
  IF v_day_budget > 0 OR v_month_budget > 0 THEN
    SELECT coalesce(sum(u.cost_usd) FILTER (WHERE u.day = v_day), 0), coalesce(sum(u.cost_usd), 0) INTO v_day_spent, v_month_spent
      FROM usage_costs u WHERE u.profile_id = p_profile AND u.day >= v_month AND u.day <= v_day;
    IF v_day_budget > 0 THEN
      RETURN QUERY SELECT 'profile'::text, p_profile, 'day'::text, v_day, v_day_budget, v_day_spent, v_to_day;
    END IF;
    IF v_month_budget > 0 THEN
      RETURN QUERY SELECT 'profile'::text, p_profile, 'month'::text, v_month, v_month_budget, v_month_spent, v_to_month;
    END IF;
  END IF;
END $$;
