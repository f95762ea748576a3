-- The person a model call counts for is its turn's first event's author (herald_record_model_call:
-- WHERE turn_id = .. ORDER BY received_at, id LIMIT 1), looked up for every model call. With
-- (turn_id) alone the planner walked inbound_events_received_idx in time order from the oldest
-- event, filtering on the turn: the 30-minute soak of 2026-12-06 saw it read 3 pages per call in
-- the first 5 minutes and 5,660 in the last, about 6 ms of every model call's record. With the
-- order in the index, the turn's first event is the first entry of its range. The index replaces
-- the one on (turn_id): every lookup by turn alone uses this one as well.
CREATE INDEX inbound_events_turn_order_idx ON inbound_events (turn_id, received_at, id) WHERE turn_id IS NOT NULL;
DROP INDEX inbound_events_turn_idx;

-- The start of every turn reads the session's last turn call (loadTranscriptState: WHERE session_id
-- = .. AND kind = 'turn' ORDER BY created_at DESC, id DESC LIMIT 1). The same soak saw that read
-- grow from 73 pages per call to 1,434: for a session with no turn call yet (every subagent's and
-- cron run's first turn) the planner could walk model_calls_created_idx backwards through the
-- whole table. This index answers it with one probe whatever the table holds.
CREATE INDEX model_calls_last_turn_idx ON model_calls (session_id, created_at DESC, id DESC) WHERE kind = 'turn';
