import type { FastifyInstance } from 'fastify';
import type { TelegramIngress } from '@herald/platforms';
import type { Logger } from '@herald/core';
import { isConnectionError } from '@herald/db';
import { sendError } from './api-errors.ts';
import { withContract } from './contracts/route-contract.ts';
import { z } from 'zod';
import { webhookAnswer } from './contracts/health-views.ts';

const webhookContract = {
  summary: 'Telegram webhook: checks X-Telegram-Bot-Api-Secret-Token, commits the update, answers 200',
  tags: ['platforms'],
  body: z.object({ update_id: z.number().int() }).loose(),
  response: { 200: webhookAnswer },
};

/**
 * POST /telegram/webhook: the secret header is checked, then the update is committed to the inbox
 * before the 200. A storage failure answers 503 so Telegram delivers the update again; a redelivery
 * is recognised by its update id and ignored.
 */
/** Telegram's webhook: public (its own secret header), and platform data rather than API input. */
export const TELEGRAM_WEBHOOK_PATH = '/telegram/webhook';

export function registerTelegramWebhook(app: FastifyInstance, telegram: TelegramIngress, logger: Logger): void {
  app.post(TELEGRAM_WEBHOOK_PATH, withContract(webhookContract), async (request, reply) => {
    if (!telegram.verifySecret(request.headers['x-telegram-bot-api-secret-token'])) {
      return sendError(reply, 401, 'unauthorized', 'X-Telegram-Bot-Api-Secret-Token: missing or not TELEGRAM_WEBHOOK_SECRET');
    }
    if (!telegram.isUpdate(request.body)) {
      return sendError(reply, 400, 'invalid_request', 'update_id: expected a Telegram Update object with an integer update_id', 'update_id');
    }
    let outcome;
    try {
      outcome = await telegram.handleUpdate(request.body);
    } catch (error) {
      // A storage outage: 503 below, and Telegram delivers the update again.
      if (isConnectionError(error)) throw error;
      // Anything else (handleUpdate dead-letters what fails twice): the platform gets its 200, never a 500.
      logger.error({ err: error, updateId: request.body.update_id }, 'telegram update could not be handled or recorded');
      return reply.code(200).send({ ok: true, outcome: 'failed' });
    }
    // Tells a proxy (or a curious operator) that a 200 here means the update is in Postgres.
    return reply.code(200).header('x-herald-delivery-accepted', 'durable').send({ ok: true, outcome });
  });
}
