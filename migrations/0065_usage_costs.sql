-- Usage and cost (docs/decisions/2026-12-06-usage-and-budgets.md): every model call carries whom it
-- counts for, its profile and its price-table cost; money budgets per person and per profile, per
-- UTC day and month; and the one 80% warning each budget gives per period.

-- Who the call counts for (the author of the turn's first message, as usage_days already counts
-- tokens), the session's profile, and the cost from the price table (0 with price_known false when
-- the model has no price). Old rows were never priced.
ALTER TABLE model_calls
  ADD COLUMN user_id text,
  ADD COLUMN profile_id text,
  ADD COLUMN cost_usd numeric(18, 9) NOT NULL DEFAULT 0,
  ADD COLUMN price_known boolean NOT NULL DEFAULT false;
-- GET /v1/usage reads a date range of calls.
CREATE INDEX model_calls_created_idx ON model_calls (created_at);

-- Money per identity, profile and UTC day, added by herald_record_model_call in the call's own
-- transaction: a budget check reads a month of this table, never model_calls.
CREATE TABLE usage_costs (
  day date NOT NULL,
  user_id text NOT NULL,
  profile_id text NOT NULL,
  cost_usd numeric(18, 9) NOT NULL DEFAULT 0,
  PRIMARY KEY (day, user_id, profile_id)
);
CREATE INDEX usage_costs_profile_idx ON usage_costs (profile_id, day);

-- One person's (the person key, herald_usage_person) or one profile's budgets in US dollars,
-- replacing the HERALD_BUDGET_* defaults: NULL keeps the default, 0 turns that budget off.
CREATE TABLE budgets (
  scope text NOT NULL CHECK (scope IN ('person', 'profile')),
  subject text NOT NULL,
  per_day numeric(18, 9) CHECK (per_day >= 0),
  per_month numeric(18, 9) CHECK (per_month >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, subject)
);

-- The warning at 80% of a budget, once per budget and period: the primary key is the "once".
CREATE TABLE budget_warnings (
  scope text NOT NULL CHECK (scope IN ('person', 'profile')),
  subject text NOT NULL,
  period text NOT NULL CHECK (period IN ('day', 'month')),
  period_start date NOT NULL,
  user_id text NOT NULL,
  session_id uuid,
  turn_id uuid,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (scope, subject, period, period_start)
);
CREATE INDEX budget_warnings_turn_idx ON budget_warnings (turn_id);
