-- Herald's own skills (the repository's skills/ folder), seeded into every profile. A copy keeps
-- which built-in version it came from and the skill version the seed wrote, so an upgrade can tell
-- an untouched copy (update it) from one the profile edited (keep the edit, offer the newer one
-- beside it). A removed copy keeps its row (deleted_at set), so it is not seeded again.
ALTER TABLE skills
  ADD COLUMN builtin_version integer,
  ADD COLUMN builtin_seeded_version integer,
  ADD COLUMN offered_builtin_version integer,
  -- The offered version's files: {"SKILL.md": "<sha256>", ...}, blobs in skill_blobs.
  ADD COLUMN offered_builtin_files jsonb,
  ADD CONSTRAINT skills_builtin_check CHECK ((builtin_version IS NULL) = (builtin_seeded_version IS NULL));
