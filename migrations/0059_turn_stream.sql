-- What a running turn shows (streamed text, tool calls), kept per inbound event so any ingress can
-- follow a turn whichever worker runs it, when there is no Redis (HERALD_QUEUE=postgres). A view,
-- never the record: unlogged (a crash empties it, and the committed reply is still the answer),
-- no foreign key (an event's stream may be written while its row is being committed elsewhere), and
-- entries older than an hour are pruned by the writers (libs/queue/src/turn-stream.ts).
CREATE UNLOGGED TABLE turn_stream_entries (
  id bigserial PRIMARY KEY,
  event_id uuid NOT NULL,
  entry jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX turn_stream_entries_event_idx ON turn_stream_entries (event_id, id);
CREATE INDEX turn_stream_entries_created_idx ON turn_stream_entries (created_at);
