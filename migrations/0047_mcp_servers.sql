-- MCP servers' tools (docs/tools.md#mcp-servers, docs/decisions/2026-12-05-mcp-tools.md).

-- A profile's own MCP servers (PUT /v1/profiles/:p/mcp), besides the operator's HERALD_MCP_FILE.
-- Secrets are named by variable (env_from, headers_from), never stored here.
CREATE TABLE profile_mcp_servers (
  profile_id text PRIMARY KEY REFERENCES profiles (id) ON DELETE CASCADE,
  servers jsonb NOT NULL DEFAULT '{}'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The MCP tools a session was offered, frozen at its first turn: the tool definitions the model
-- sees stay byte-stable for the session's life, whichever worker runs it and whatever the servers
-- list later. A session that began before any server was configured has an empty list.
CREATE TABLE session_mcp_tools (
  session_id uuid PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  tools jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
