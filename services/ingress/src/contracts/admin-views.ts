import { z } from 'zod';
import { anyJson, isoTime } from './common.ts';

const count = z.number().int();

export const clusterStatus = z.object({
  roles: z.record(z.string(), count),
  queues: z.array(z.object({ queue: z.string(), waiting: count, active: count, delayed: count, failed: count, oldest_waiting_seconds: z.number() })),
  // The oldest pending event and its session come from one row: both set, or no turn waits.
  oldest_waiting_turn: z.object({ event_id: z.string(), session_id: z.string(), waiting_seconds: z.number() }).nullable(),
  dead_letters: z.record(z.string(), count),
});

export const postgresJobs = z.object({ queue: z.string(), jobs: z.array(z.record(z.string(), anyJson)) });

export const failedDelivery = z.object({
  id: z.string(),
  session_id: z.string().nullable(),
  platform: z.string(),
  source: z.string(),
  target: z.record(z.string(), z.string()),
  text: z.string(),
  attempts: count,
  reason: z.string().nullable(),
  created_at: isoTime,
  failed_at: isoTime,
});

export const deadLetters = z.object({
  dead_letters: z.array(z.object({ kind: z.string(), id: z.string(), reason: z.string(), failures: count, session_id: z.string().nullable(), failed_at: isoTime })),
  deliveries: z.array(failedDelivery),
  jobs: z.array(z.object({ id: z.string(), queue: z.string(), data: anyJson, reason: z.string(), state: z.string(), created_at: isoTime })),
});

export const deliveryRetried = z.object({ id: z.string(), status: z.literal('pending') });

export const auditPage = z.object({
  entries: z.array(
    z.object({
      id: z.string(),
      at: isoTime,
      kind: z.string(),
      actor: z.string().nullable(),
      profile_id: z.string().nullable(),
      session_id: z.string().nullable(),
      turn_id: z.string().nullable(),
      subject: z.string(),
      detail: anyJson,
    }),
  ),
  next: z.string().nullable(),
});

export type ClusterStatus = z.infer<typeof clusterStatus>;
export type DeadLetters = z.infer<typeof deadLetters>;
