-- People, roles and personal API tokens (docs/security.md, docs/decisions/2026-12-06-person-key.md).
-- A person is named by one key, a qualified user id (`api:ana`, `telegram:42`): the id memory,
-- history search, quotas and sessions already carry. Every other identity the person links is
-- stored here and is rewritten to the key when a message arrives, so the tables that name people
-- need no change.
CREATE TABLE people (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
  key text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One platform identity belongs to at most one person; the key itself is one of them.
CREATE TABLE person_identities (
  identity text PRIMARY KEY,
  person_id uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  linked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX person_identities_person_idx ON person_identities (person_id);

-- A role, for every profile (profiles empty) or only the profiles listed.
CREATE TABLE role_grants (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  person_id uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'operator', 'member', 'viewer')),
  profiles text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (person_id, role)
);

-- Only a scrypt hash with its own salt: the database never holds a usable token. The public
-- prefix (`hrd_<id>_`) finds the row; the secret after it is what the hash checks.
CREATE TABLE api_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  person_id uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT '' CHECK (length(name) <= 100),
  salt bytea NOT NULL,
  hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_tokens_person_idx ON api_tokens (person_id);

-- A one-time code that links the identity that sends `/link CODE` to the person; 10 minutes.
CREATE TABLE link_codes (
  code_hash bytea PRIMARY KEY,
  person_id uuid NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  used_by text
);
CREATE INDEX link_codes_person_idx ON link_codes (person_id);
