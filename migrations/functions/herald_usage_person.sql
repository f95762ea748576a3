-- The person a platform identity's usage and budgets count for: the one place an identity
-- (telegram:42, api:ana) maps to a person. Today every identity is its own person; when people
-- link identities, this becomes the lookup, and every usage report and budget follows it.
CREATE OR REPLACE FUNCTION herald_usage_person(p_user_id text) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT p_user_id
$$;
