import type { FastifyInstance } from 'fastify';
import { discardFailedDelivery, listFailedDeliveries, retryFailedDelivery } from '@herald/delivery';
import { CRON_FINISH_DEAD_LETTER_QUEUE, CRON_FIRE_DEAD_LETTER_QUEUE } from '@herald/cron';
import { REVIEW_DEAD_LETTER_QUEUE } from '@herald/knowledge';
import { discardDeadLetterJob, listDeadLetterJobs } from '@herald/jobs';
import type { Db } from '@herald/db';
import { sendError } from './api-errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LIMIT = 100;

// pg-boss's dead-letter queues. Their handlers already recorded each failure where people look (a
// failed review, a paused cron job, a failed run), so these are kept for reading and discarding;
// the retry of what they stand for is the job's own action (resume the cron job, run it now).
const JOB_DEAD_LETTERS = [REVIEW_DEAD_LETTER_QUEUE, CRON_FIRE_DEAD_LETTER_QUEUE, CRON_FINISH_DEAD_LETTER_QUEUE] as const;

/**
 * `GET /v1/admin/dead-letters`: work given up on for good, with the reason: outbox rows that ended
 * `failed` (retry or discard) and pg-boss's dead-letter jobs (discard).
 */
export function registerDeadLetterRoutes(app: FastifyInstance, db: Db): void {
  app.get('/v1/admin/dead-letters', async () => {
    const [deliveries, jobs] = await Promise.all([listFailedDeliveries(db, LIMIT), listDeadLetterJobs(db, JOB_DEAD_LETTERS, LIMIT)]);
    return {
      deliveries: deliveries.map((row) => ({
        id: row.id,
        session_id: row.sessionId,
        platform: row.platform,
        source: row.source,
        target: row.target,
        text: row.text,
        attempts: row.attempts,
        reason: row.lastError,
        created_at: row.createdAt.toISOString(),
        failed_at: row.failedAt.toISOString(),
      })),
      jobs: jobs.map((job) => ({ id: job.id, queue: job.queue, data: job.data, reason: job.reason, state: job.state, created_at: job.createdAt.toISOString() })),
    };
  });

  app.post<{ Params: { id: string } }>('/v1/admin/dead-letters/deliveries/:id/retry', async (request, reply) => {
    const done = UUID.test(request.params.id) && (await retryFailedDelivery(db, request.params.id));
    if (!done) return sendError(reply, 404, 'not_found', 'no failed delivery with this id (already retried, delivered or discarded?)');
    return reply.code(202).send({ id: request.params.id, status: 'pending' });
  });

  app.delete<{ Params: { id: string } }>('/v1/admin/dead-letters/deliveries/:id', async (request, reply) => {
    const done = UUID.test(request.params.id) && (await discardFailedDelivery(db, request.params.id));
    if (!done) return sendError(reply, 404, 'not_found', 'no failed delivery with this id');
    return reply.code(204).send();
  });

  app.delete<{ Params: { id: string } }>('/v1/admin/dead-letters/jobs/:id', async (request, reply) => {
    if (!(await discardDeadLetterJob(db, JOB_DEAD_LETTERS, request.params.id))) return sendError(reply, 404, 'not_found', 'no dead-letter job with this id');
    return reply.code(204).send();
  });
}
