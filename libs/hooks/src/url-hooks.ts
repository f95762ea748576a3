import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { sendJob } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';

/** pg-boss queue of url hook deliveries; consumed by the scheduler (services/scheduler/src/hook-delivery.ts). */
export const HOOK_DELIVERY_QUEUE = 'hook-deliveries';
export const HOOK_DELIVERY_DEAD_LETTER = 'hook-deliveries-dead-letter';
export const SIGNATURE_HEADER = 'x-herald-signature';

/** One event for one url hook; the body is signed when it is sent, so no key sits in the queue. */
export interface HookDeliveryJob {
  hook: string;
  url: string;
  event: string;
  body: string;
}

/** Retries with backoff for about half an hour, then the dead letter (a remote system never stalls a turn). */
export function hookQueues(): QueueSpec[] {
  return [
    { name: HOOK_DELIVERY_DEAD_LETTER, retryLimit: 0, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 60, retentionMinutes: 7 * 24 * 60 },
    {
      name: HOOK_DELIVERY_QUEUE,
      retryLimit: 8,
      retryDelaySeconds: 1,
      retryBackoff: true,
      expireInSeconds: 60,
      retentionMinutes: 24 * 60,
      deadLetter: HOOK_DELIVERY_DEAD_LETTER,
    },
  ];
}

/** `sha256=<hex>` of the HMAC-SHA256 of the exact body bytes under the shared secret. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** For receivers (and tests): a constant-time check of a signature header against the body. */
export function verifySignature(secret: string, body: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** A stable job id from what the delivery is about: the same event sent twice is one job. */
function jobId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function sendHookDelivery(executor: Kysely<Database>, job: HookDeliveryJob, key: string | undefined): Promise<void> {
  await sendJob(executor, HOOK_DELIVERY_QUEUE, job, key === undefined ? {} : { id: jobId(`${job.hook}:${key}`) });
}
