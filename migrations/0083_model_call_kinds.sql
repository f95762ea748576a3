-- What a model call was for (docs/decisions/2026-12-06-model-call-kinds.md): a turn's own call, the
-- background review of a turn (services/reviewer), or the summary of a compression. Every kind is
-- priced and counts for the person and the profile (usage_days, usage_costs, so the budgets see
-- it); only a turn's calls measure the transcript (the last one's input_tokens is the size of the
-- session's prompt) and make a session's own token counts. Rows before this migration were all turns.
ALTER TABLE model_calls
  ADD COLUMN kind text NOT NULL DEFAULT 'turn' CHECK (kind IN ('turn', 'review', 'compression'));
