-- Platforms as adapters: the outbox (durable outbound delivery with receipts), leases for the
-- platform connections (one Telegram poller per bot token, one Discord gateway per shard), and the
-- platform's own id of an inbound message (reply threading, and the anchor that lets an ambiguous
-- Telegram send be reconciled). See docs/decisions/2026-11-30-outbox-delivery.md.

CREATE TABLE outbox (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- One logical message: 'reply:<turn_id>', 'command:<event_id>', 'cron:<run_id>'. Retries of the
  -- transport reuse the row, so a logical message is delivered at most once per key.
  idempotency_key text NOT NULL UNIQUE,
  platform text NOT NULL,
  target jsonb NOT NULL,
  -- Markdown; the sender converts and splits it for its platform.
  text text NOT NULL,
  session_id uuid NULL REFERENCES sessions (id) ON DELETE CASCADE,
  source text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text NULL,
  -- Platform message ids once delivered: {"messageIds": [...]}.
  receipt jsonb NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz NULL,
  -- The current claim: a 'sending' row whose claim expired was abandoned by a dead consumer.
  claim_token uuid NULL,
  claim_expires_at timestamptz NULL,
  -- Message ids of the parts already on the platform, in order: a retry resumes after them.
  parts_sent jsonb NOT NULL DEFAULT '[]',
  -- Written (committed) before each platform call and cleared with its result: a row found with it
  -- set after a crash or timeout is an ambiguous send, reconciled before anything is resent.
  -- {"part": n, "marker": "...", "anchor": "<last message id known in the chat>"}
  in_flight jsonb NULL
);
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at) WHERE status IN ('pending', 'sending');
CREATE INDEX outbox_session_idx ON outbox (session_id, created_at);
-- Per-chat order: the claim looks for an older open row of the same chat (or URL).
CREATE INDEX outbox_open_chat_idx ON outbox (platform, (target ->> 'chatId'), created_at)
  WHERE status IN ('pending', 'sending');
CREATE INDEX outbox_open_url_idx ON outbox (platform, (target ->> 'url'), created_at)
  WHERE status IN ('pending', 'sending');

-- Long-lived platform connections that must have exactly one holder cluster-wide.
CREATE TABLE platform_leases (
  name text PRIMARY KEY,
  owner text NOT NULL,
  token bigint NOT NULL,
  expires_at timestamptz NOT NULL
);

ALTER TABLE inbound_events ADD COLUMN platform_message_id text NULL;

-- As in 0002, plus: when the session is routed to a chat platform, the reply goes into the outbox
-- in the same transaction as the assistant message, so a committed reply is never lost before it
-- is sent. The API platform reads replies from the event and gets no outbox row.
CREATE OR REPLACE FUNCTION herald_finish_turn(p_session uuid, p_token bigint, p_turn uuid, p_events uuid[], p_reply text,
                                              p_failed boolean, p_error text, p_iterations integer,
                                              p_model_call jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM herald_check_lease(p_session, p_token);
  PERFORM herald_record_model_call(p_session, p_turn, p_model_call);
  PERFORM herald_append_messages(p_session, p_turn, jsonb_build_array(jsonb_build_object('role', 'assistant', 'content', p_reply)));
  UPDATE turns SET status = CASE WHEN p_failed THEN 'failed' ELSE 'done' END, iterations = p_iterations,
                   ended_at = clock_timestamp(), error = p_error
    WHERE id = p_turn;
  UPDATE inbound_events SET status = 'done', reply_text = p_reply, completed_at = clock_timestamp(), error = p_error
    WHERE id = ANY (p_events);
  INSERT INTO outbox (idempotency_key, platform, target, text, session_id, source)
  SELECT 'reply:' || p_turn, s.platform,
         jsonb_strip_nulls(jsonb_build_object(
           'chatId', s.chat_id, 'chatType', s.chat_type, 'threadId', s.thread_id,
           'replyTo', (SELECT e.platform_message_id FROM inbound_events e
                       WHERE e.id = ANY (p_events) AND e.platform_message_id IS NOT NULL
                       ORDER BY e.received_at DESC LIMIT 1))),
         p_reply, p_session, 'reply'
  FROM sessions s
  WHERE s.id = p_session AND s.platform IN ('telegram', 'discord') AND btrim(p_reply) <> ''
  ON CONFLICT (idempotency_key) DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('herald_outbox', p_session::text);
  END IF;
END $$;
