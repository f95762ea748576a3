-- Cron jobs and their runs (see docs/decisions/2026-11-30-cron-scheduler.md).

-- The scheduler's clock: the database clock plus an offset that is 0 in production. Every replica
-- reads the same clock, so replica clock skew cannot make two of them disagree about what is due;
-- tests move the offset forward instead of waiting for real minutes.
CREATE TABLE cron_clock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  offset_ms bigint NOT NULL DEFAULT 0
);
INSERT INTO cron_clock DEFAULT VALUES;

CREATE FUNCTION herald_cron_now() RETURNS timestamptz
LANGUAGE sql AS $$
  SELECT clock_timestamp() + coalesce((SELECT offset_ms FROM cron_clock), 0) * interval '1 millisecond';
$$;

CREATE TABLE cron_jobs (
  id uuid PRIMARY KEY,
  profile_id text NOT NULL REFERENCES profiles (id),
  creator_user_id text NOT NULL,
  name text NOT NULL,
  prompt text NOT NULL,
  -- As the person wrote it ("every 30m", "0 9 * * 1-5", "in 2h"), and as parsed.
  schedule text NOT NULL,
  schedule_kind text NOT NULL CHECK (schedule_kind IN ('cron', 'interval', 'once')),
  cron_expr text,
  interval_ms bigint,
  run_at timestamptz,
  timezone text NOT NULL DEFAULT 'UTC',
  session_mode text NOT NULL DEFAULT 'fresh' CHECK (session_mode IN ('fresh', 'named')),
  session_name text,
  skills jsonb NOT NULL DEFAULT '[]',
  toolsets jsonb NOT NULL DEFAULT '[]',
  -- Concrete targets: [{"platform": "telegram", "chatId": "..", "threadId": ".."}, {"platform": "webhook", "url": ".."}].
  targets jsonb NOT NULL DEFAULT '[]',
  -- The chat the job was created from; the owner is told there when the job is paused.
  origin jsonb,
  enabled boolean NOT NULL DEFAULT true,
  paused_reason text,
  missed_policy text NOT NULL DEFAULT 'run_once' CHECK (missed_policy IN ('skip', 'run_once')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  -- NULL once a one-shot has fired: the job is completed.
  next_run_at timestamptz,
  last_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (session_mode = 'fresh' OR session_name IS NOT NULL)
);
CREATE INDEX cron_jobs_due_idx ON cron_jobs (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;
CREATE INDEX cron_jobs_owner_idx ON cron_jobs (profile_id, creator_user_id, created_at);

-- One row per occurrence: the unique (job_id, scheduled_for) is what makes an occurrence fire once
-- however many scheduler replicas see it due.
CREATE TABLE cron_runs (
  id uuid PRIMARY KEY,
  job_id uuid NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
  scheduled_for timestamptz NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('schedule', 'missed', 'manual')),
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'running', 'succeeded', 'silent', 'failed', 'skipped')),
  session_id uuid REFERENCES sessions (id),
  event_id uuid REFERENCES inbound_events (id),
  output text,
  error text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at timestamptz,
  finished_at timestamptz,
  UNIQUE (job_id, scheduled_for)
);
CREATE INDEX cron_runs_open_idx ON cron_runs (status, created_at) WHERE status IN ('pending', 'running');
CREATE INDEX cron_runs_job_idx ON cron_runs (job_id, scheduled_for DESC);
