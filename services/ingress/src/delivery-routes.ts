import type { FastifyInstance } from 'fastify';
import { listDeliveries } from '@herald/delivery';
import type { Db } from '@herald/db';
import { sessionExists } from '@herald/session';
import { sendError } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams } from './contracts/common.ts';
import { deliveryList } from './contracts/session-views.ts';

/** GET /v1/sessions/:id/deliveries: what the outbox sent to the chat, and what it could not. */
export function registerDeliveryRoutes(app: FastifyInstance, db: Db): void {
  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/deliveries',
    withContract({ summary: 'What the outbox sent to the chat, and what it could not', tags: ['sessions'], params: idParams, response: { 200: deliveryList } }),
    async (request, reply) => {
      if (!(await sessionExists(db, request.params.id))) return sendError(reply, 404, 'not_found', 'no such session');
      const deliveries = await listDeliveries(db, request.params.id);
      return {
        deliveries: deliveries.map((delivery) => ({
          id: delivery.id,
          idempotency_key: delivery.idempotencyKey,
          platform: delivery.platform,
          target: delivery.target,
          source: delivery.source,
          status: delivery.status,
          attempts: delivery.attempts,
          last_error: delivery.lastError,
          message_ids: delivery.status === 'delivered' ? ((delivery.receipt?.messageIds as string[] | undefined) ?? []) : delivery.partsSent,
          created_at: delivery.createdAt.toISOString(),
          delivered_at: delivery.deliveredAt?.toISOString() ?? null,
          next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
        })),
      };
    },
  );
}
