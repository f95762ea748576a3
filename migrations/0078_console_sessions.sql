-- The console's signed-in sessions (docs/security.md, "Console sign-in"): the browser holds a random
-- secret in an HttpOnly cookie; only its SHA-256 is stored here, so a copy of the table signs nobody
-- in. Ended on the server by signing out, by expiry, and with the person (ON DELETE CASCADE).
CREATE TABLE console_sessions (
  secret_hash bytea PRIMARY KEY,
  person_id uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  -- Sent back in a header by every state-changing call (double submit): a cross-site form cannot know it.
  csrf_token text NOT NULL,
  via text NOT NULL CHECK (via IN ('token', 'oidc')),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_person_idx ON console_sessions (person_id);
CREATE INDEX console_sessions_expiry_idx ON console_sessions (expires_at);
