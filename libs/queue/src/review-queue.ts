import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** Reviews have their own queue, so a burst of them never waits in front of replies. */
export const REVIEW_QUEUE = 'reviews';

export interface ReviewJob {
  reviewId: string;
}

/**
 * One job id per review attempt: a job stuck as active under a dead reviewer cannot block the
 * retry, and a duplicate add of the same attempt collapses. Postgres decides who really runs it.
 */
export function reviewJobId(reviewId: string, attempt: number): string {
  return `review.${reviewId}.${attempt}`;
}

export function createReviewQueue(connection: Redis, prefix: string): Queue<ReviewJob> {
  return new Queue<ReviewJob>(REVIEW_QUEUE, { connection, prefix });
}

export async function enqueueReview(queue: Queue<ReviewJob>, reviewId: string, attempt: number, delayMs = 0): Promise<void> {
  await queue.add(
    'review',
    { reviewId },
    { jobId: reviewJobId(reviewId, attempt), delay: delayMs, removeOnComplete: true, removeOnFail: true, attempts: 1 },
  );
}
