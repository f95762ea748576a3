import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { uuidSchema } from '@herald/core';
import { getReview, listReviews } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { sendError, sendInvalid } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams } from './contracts/common.ts';
import { reviewList, reviewView } from './contracts/knowledge-views.ts';

const reviewQuery = z.object({
  session_id: uuidSchema.optional(),
  profile: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/** Background reviews: what the reviewer looked at and what it saved. */
export function registerReviewRoutes(app: FastifyInstance, db: Db): void {
  app.get('/v1/reviews', withContract({ summary: 'Background reviews, newest first', tags: ['reviews'], querystring: reviewQuery, response: { 200: reviewList } }), async (request, reply) => {
    const parsed = reviewQuery.safeParse(request.query ?? {});
    if (!parsed.success) return sendInvalid(reply, parsed.error);
    return {
      reviews: await listReviews(db, { sessionId: parsed.data.session_id, profileId: parsed.data.profile, limit: parsed.data.limit }),
    };
  });

  app.get<{ Params: { id: string } }>(
    '/v1/reviews/:id',
    withContract({ summary: 'A review: what it looked at and what it saved', tags: ['reviews'], params: idParams, response: { 200: reviewView } }),
    async (request, reply) => {
      return (await getReview(db, request.params.id)) ?? sendError(reply, 404, 'not_found', 'no such review');
    },
  );
}
