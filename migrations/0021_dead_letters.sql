-- Work that failed the same way twice, kept with its reason instead of being retried forever:
-- platform updates (a forged or malformed Telegram update or button press) and run jobs (a
-- session whose turn fails at the same place every time). A row is 'failing' after one failure
-- and 'dead' after a second with the same reason; a dead one is skipped by intake and by the
-- worker. Reviews and cron jobs keep their dead letters where they were (pg-boss's dead-letter
-- queues, recorded on reviews, cron_runs and cron_jobs), and failed deliveries stay in the outbox:
-- herald_dead_letters() lists them all in one place.
CREATE TABLE dead_letters (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source text NOT NULL CHECK (source IN ('telegram_update', 'run')),
  -- What the source retries by: telegram:<bot>:<update_id>, or the id of the turn that failed.
  key text NOT NULL,
  status text NOT NULL DEFAULT 'failing' CHECK (status IN ('failing', 'dead')),
  reason text NOT NULL,
  failures integer NOT NULL DEFAULT 1,
  session_id uuid NULL REFERENCES sessions (id) ON DELETE CASCADE,
  payload jsonb NULL,
  first_failed_at timestamptz NOT NULL DEFAULT now(),
  last_failed_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source, key)
);

CREATE INDEX dead_letters_dead ON dead_letters (last_failed_at DESC) WHERE status = 'dead';
