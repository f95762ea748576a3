import { isUuid } from '@herald/core';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { discardFailedDelivery, listFailedDeliveries, retryFailedDelivery } from '@herald/delivery';
import { CRON_FINISH_DEAD_LETTER_QUEUE, CRON_FIRE_DEAD_LETTER_QUEUE } from '@herald/cron';
import { REVIEW_DEAD_LETTER_QUEUE } from '@herald/knowledge';
import { discardDeadLetterJob, listDeadLetterJobs } from '@herald/jobs';
import type { Db } from '@herald/db';
import { listDeadLetters } from '@herald/session';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams, noContent } from './contracts/common.ts';
import { deadLetters, deliveryRetried } from './contracts/admin-views.ts';

const LIMIT = 100;

const deadLettersQuery = z.object({ limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(1000).default(LIMIT) });

// pg-boss's dead-letter queues. Their handlers already recorded each failure where people look (a
// failed review, a paused cron job, a failed run), so these are kept for reading and discarding;
// the retry of what they stand for is the job's own action (resume the cron job, run it now).
const JOB_DEAD_LETTERS = [REVIEW_DEAD_LETTER_QUEUE, CRON_FIRE_DEAD_LETTER_QUEUE, CRON_FINISH_DEAD_LETTER_QUEUE] as const;

type FailedDelivery = Awaited<ReturnType<typeof listFailedDeliveries>>[number];

function deliveryView(row: FailedDelivery) {
  return {
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
  };
}

/**
 * `GET /v1/admin/dead-letters`: work given up on for good, with the reason. `dead_letters` is every
 * kind in one list, newest first (`herald_dead_letters`: platform updates and runs that failed
 * twice the same way, failed deliveries, failed reviews, paused cron jobs); `deliveries` and `jobs`
 * are the two kinds an operator can act on here: outbox rows that ended `failed` (retry or
 * discard) and pg-boss's dead-letter jobs (discard).
 */
export function registerDeadLetterRoutes(app: FastifyInstance, db: Db): void {
  app.get(
    '/v1/admin/dead-letters',
    withContract({ summary: 'Work given up on for good, with the reason', tags: ['admin'], querystring: deadLettersQuery, response: { 200: deadLetters } }),
    async (request, reply) => {
      const parsed = deadLettersQuery.safeParse(request.query);
      if (!parsed.success) {
        const issue = firstIssue(parsed.error);
        return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
      }
      const [letters, deliveries, jobs] = await Promise.all([
        listDeadLetters(db, parsed.data.limit),
        listFailedDeliveries(db, parsed.data.limit),
        listDeadLetterJobs(db, JOB_DEAD_LETTERS, parsed.data.limit),
      ]);
      return {
        dead_letters: letters.map((letter) => ({
          kind: letter.kind,
          id: letter.id,
          reason: letter.reason,
          failures: letter.failures,
          session_id: letter.sessionId,
          failed_at: letter.failedAt.toISOString(),
        })),
        deliveries: deliveries.map(deliveryView),
        jobs: jobs.map((job) => ({ id: job.id, queue: job.queue, data: job.data, reason: job.reason, state: job.state, created_at: job.createdAt.toISOString() })),
      };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/admin/dead-letters/deliveries/:id/retry',
    withContract({ summary: 'Retry a failed delivery', tags: ['admin'], params: idParams, response: { 202: deliveryRetried } }),
    async (request, reply) => {
      const done = isUuid(request.params.id) && (await retryFailedDelivery(db, request.params.id));
      if (!done) return sendError(reply, 404, 'not_found', 'no failed delivery with this id (already retried, delivered or discarded?)');
      return reply.code(202).send({ id: request.params.id, status: 'pending' });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/admin/dead-letters/deliveries/:id',
    withContract({ summary: 'Discard a failed delivery', tags: ['admin'], params: idParams, response: { 204: noContent } }),
    async (request, reply) => {
      const done = isUuid(request.params.id) && (await discardFailedDelivery(db, request.params.id));
      if (!done) return sendError(reply, 404, 'not_found', 'no failed delivery with this id');
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/admin/dead-letters/jobs/:id',
    withContract({ summary: 'Discard a dead-letter job', tags: ['admin'], params: idParams, response: { 204: noContent } }),
    async (request, reply) => {
      if (!(await discardDeadLetterJob(db, JOB_DEAD_LETTERS, request.params.id))) return sendError(reply, 404, 'not_found', 'no dead-letter job with this id');
      return reply.code(204).send();
    },
  );
}
