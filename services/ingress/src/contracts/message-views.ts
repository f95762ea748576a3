import { z } from 'zod';
import { isoTime } from './common.ts';

/** A parked turn as a person sees it (wait-views.ts waitingView). */
export const waitingView = z.object({
  id: z.string(),
  kind: z.string(),
  tool: z.string(),
  prompt: z.string(),
  choices: z.array(z.string()).nullable(),
  expires_at: isoTime,
  how_to_answer: z.string(),
});

const replyText = z.object({ text: z.string() });

/** The 80% warnings of the money budgets the turn gave the person (once per budget and period). */
const budgetWarnings = z.array(z.string()).optional();

/** POST /v1/messages: the ids, with the reply once there or the wait the turn is parked on. */
export const messageAccepted = z.object({
  event_id: z.string(),
  session_id: z.string(),
  reply: replyText.optional(),
  status: z.literal('waiting').optional(),
  waiting: waitingView.optional(),
  budget_warnings: budgetWarnings,
});

export const messageSkipped = z.object({ status: z.literal('skipped'), reason: z.string() });

/** POST /v1/messages' 200: accepted (a reply already there, or waited for), or skipped by a hook. */
export const messageAnswer = z.union([messageAccepted, messageSkipped]);
export type MessageAnswer = z.infer<typeof messageAnswer>;

export const eventView = z.object({
  event_id: z.string(),
  session_id: z.string(),
  status: z.string(),
  reply: replyText.nullable(),
  waiting: waitingView.optional(),
  budget_warnings: budgetWarnings,
});

/** A wait in full (wait-views.ts waitView). */
export const waitView = z.object({
  id: z.string(),
  session_id: z.string(),
  turn_id: z.string(),
  kind: z.string(),
  tool: z.string().nullable(),
  arguments: z.string(),
  prompt: z.string().nullable(),
  choices: z.array(z.string()).nullable(),
  status: z.string(),
  answer: z.string().nullable(),
  answered_by: z.string().nullable(),
  created_at: isoTime,
  expires_at: isoTime,
  resolved_at: isoTime.nullable(),
});

export const waitList = z.object({ waits: z.array(waitView) });

export type WaitingView = z.infer<typeof waitingView>;
export type WaitView = z.infer<typeof waitView>;
export type WaitList = z.infer<typeof waitList>;

/**
 * GET /v1/events/:id/stream, and POST /v1/messages with Accept: text/event-stream: server-sent
 * events `delta` {text}, `tool` {name, status}, `compression` {status}, `waiting` (a waitingView), then `done`
 * {event_id, session_id, reply: {text}} or `error` {code, message}; `id:` lines to resume from.
 */
export const eventStream = z.string().describe('text/event-stream of delta, tool, compression, waiting, done and error events');

/** The data of each event of that stream, by its `event:` name (turn-follow.ts FollowEvent). */
export const streamEvents = {
  delta: z.object({ text: z.string() }),
  tool: z.object({ name: z.string(), status: z.string() }),
  compression: z.object({ status: z.enum(['start', 'done']) }),
  waiting: waitingView,
  done: z.object({ event_id: z.string(), session_id: z.string(), reply: replyText }),
  error: z.object({ code: z.string(), message: z.string() }),
};

export type StreamEventName = keyof typeof streamEvents;
export type StreamEventData = { [K in StreamEventName]: z.infer<(typeof streamEvents)[K]> };

/** GET /v1/sessions/:id/open-events: the accepted events whose turn has not ended, oldest first. */
export const openEventList = z.object({
  events: z.array(z.object({ event_id: z.string(), status: z.string(), received_at: isoTime })),
});

export type OpenEventList = z.infer<typeof openEventList>;
