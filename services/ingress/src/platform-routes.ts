import type { FastifyInstance } from 'fastify';
import { isUpdate } from '@herald/platforms';
import type { TelegramIngress } from '@herald/platforms';
import { sendError } from './api-errors.ts';

/**
 * POST /telegram/webhook: the secret header is checked, then the update is committed to the inbox
 * before the 200. A storage failure answers 503 so Telegram delivers the update again; a redelivery
 * is recognised by its update id and ignored.
 */
export function registerTelegramWebhook(app: FastifyInstance, telegram: TelegramIngress): void {
  app.post('/telegram/webhook', async (request, reply) => {
    if (!telegram.verifySecret(request.headers['x-telegram-bot-api-secret-token'])) {
      return sendError(reply, 401, 'unauthorized', 'X-Telegram-Bot-Api-Secret-Token: missing or not TELEGRAM_WEBHOOK_SECRET');
    }
    if (!isUpdate(request.body)) {
      return sendError(reply, 400, 'invalid_request', 'update_id: expected a Telegram Update object with an integer update_id', 'update_id');
    }
    const outcome = await telegram.handleUpdate(request.body);
    // Tells a proxy (or a curious operator) that a 200 here means the update is in Postgres.
    return reply.code(200).header('x-herald-delivery-accepted', 'durable').send({ ok: true, outcome });
  });
}
