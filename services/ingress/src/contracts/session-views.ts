import { z } from 'zod';
import { isoTime } from './common.ts';

/** GET/PATCH /v1/sessions/:id: a session's own record. */
export const sessionRecord = z.object({
  session_id: z.string(),
  session_key: z.string(),
  profile: z.string(),
  platform: z.string(),
  queue_mode: z.string(),
  system_prompt: z.string().nullable(),
  parent_session_id: z.string().nullable(),
  child_session_id: z.string().nullable(),
  title: z.string().nullable(),
  end_reason: z.string().nullable(),
  ended_at: isoTime.nullable(),
  created_at: isoTime,
});

export const lineageView = z.object({
  sessions: z.array(
    z.object({
      session_id: z.string(),
      title: z.string().nullable(),
      parent_session_id: z.string().nullable(),
      end_reason: z.string().nullable(),
      ended_at: isoTime.nullable(),
      created_at: isoTime,
    }),
  ),
});

/** One row of GET /v1/sessions. */
export const sessionSummary = z.object({
  session_id: z.string(),
  session_key: z.string(),
  profile: z.string(),
  platform: z.string(),
  chat_type: z.string(),
  chat_id: z.string(),
  thread_id: z.string().nullable(),
  origin_user_id: z.string().nullable(),
  parent_session_id: z.string().nullable(),
  live: z.boolean(),
  messages: z.number().int(),
  children: z.number().int(),
  pending_waits: z.number().int(),
  created_at: isoTime,
  updated_at: isoTime,
});

/** A platform a session can be on: `name` is what the list's `platform` filter takes, `label` what people read. */
export const sessionPlatform = z.object({ name: z.string(), label: z.string() });

/** GET /v1/sessions: a page of sessions, the next page's cursor, and the platforms to filter by (from the registry). */
export const sessionList = z.object({ sessions: z.array(sessionSummary), next_before: z.string().nullable(), platforms: z.array(sessionPlatform) });

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
  name: z.string(),
  arguments: z.string(),
});

/** A file a message carried: its bytes are GET /v1/sessions/:id/attachments/:sha256. */
export const messageAttachment = z.object({
  name: z.string(),
  /** Sniffed from the bytes; `kind` image is only PNG, JPEG, GIF or WebP (SVG and HTML are documents). */
  mime: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  kind: z.enum(['image', 'audio', 'document']),
});

/** One message of a transcript, tool calls in OpenAI's shape and flat; a user message's files when it carried some. */
export const transcriptMessage = z.object({
  id: z.string(),
  seq: z.number().int(),
  role: z.string(),
  content: z.string(),
  tool_calls: z.array(toolCall).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  attachments: z.array(messageAttachment).optional(),
  created_at: isoTime,
});

/** One keyset page of a transcript (any of limit, before, after, around asked for). */
export const transcriptPaged = z.object({ messages: z.array(transcriptMessage), has_before: z.boolean(), has_after: z.boolean() });
/** The whole transcript, or one keyset page of it. */
export const transcriptPage = z.union([transcriptPaged, z.object({ messages: z.array(transcriptMessage) })]);

export const deliveryList = z.object({
  deliveries: z.array(
    z.object({
      id: z.string(),
      idempotency_key: z.string(),
      platform: z.string(),
      target: z.record(z.string(), z.string()),
      source: z.string(),
      status: z.string(),
      attempts: z.number().int(),
      last_error: z.string().nullable(),
      message_ids: z.array(z.string()),
      created_at: isoTime,
      delivered_at: isoTime.nullable(),
      next_attempt_at: isoTime.nullable(),
    }),
  ),
});

export const handoffView = z.object({
  id: z.string(),
  session_id: z.string(),
  platform: z.string(),
  status: z.string(),
  reason: z.string().nullable(),
  requested_by: z.string(),
  target_chat_id: z.string().nullable(),
  requested_at: isoTime,
  finished_at: isoTime.nullable(),
});

export const runView = z.object({
  id: z.string(),
  parent_session_id: z.string(),
  parent_turn_id: z.string(),
  tool_call_id: z.string(),
  task_index: z.number().int(),
  child_session_id: z.string(),
  goal: z.string(),
  context: z.string().nullable(),
  role: z.string(),
  tools: z.array(z.string()),
  depth: z.number().int(),
  max_iterations: z.number().int(),
  background: z.boolean(),
  status: z.string(),
  exit_reason: z.string().nullable(),
  created_at: isoTime,
  started_at: isoTime.nullable(),
  finished_at: isoTime.nullable(),
});

export const runList = z.object({ runs: z.array(runView), next_before: z.string().nullable() });
/** A run with the child's result in Hermes' shape once it ended. */
export const runDetail = runView.extend({ result: z.unknown() });
export const runsCancelled = z.object({ cancelled: z.array(z.string()) });

export type SessionRecord = z.infer<typeof sessionRecord>;
export type SessionSummary = z.infer<typeof sessionSummary>;
export type SessionList = z.infer<typeof sessionList>;
export type SessionPlatform = z.infer<typeof sessionPlatform>;
export type TranscriptMessage = z.infer<typeof transcriptMessage>;
export type MessageAttachment = z.infer<typeof messageAttachment>;
export type TranscriptPage = z.infer<typeof transcriptPaged>;
export type DeliveryList = z.infer<typeof deliveryList>;
export type RunView = z.infer<typeof runView>;
export type RunList = z.infer<typeof runList>;
