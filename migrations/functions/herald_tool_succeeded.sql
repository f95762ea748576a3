-- The one rule for "this tool call succeeded", for tools whose result is a JSON object with a
-- boolean "success" (memory, skill_manage): true only for an object whose "success" is true,
-- whatever the key order; text that is not JSON, or any other shape, is not a success.
-- libs/tools/src/shared/tool-result.ts reads results by the same rule for the reviewer;
-- libs/knowledge/test/review-store.test.ts checks the two agree.
CREATE OR REPLACE FUNCTION herald_tool_succeeded(p_content text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN coalesce((p_content::jsonb -> 'success') = 'true'::jsonb, false);
EXCEPTION WHEN invalid_text_representation THEN
  RETURN false;
END $$;
