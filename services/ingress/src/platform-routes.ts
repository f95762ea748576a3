import type { FastifyInstance } from 'fastify';
import type { PlatformWebhook, TelegramIngress } from '@herald/platforms';
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

const platformEventContract = (summary: string) => ({
  summary,
  tags: ['platforms'],
  body: z.string().describe('the request exactly as the platform signed it (JSON, or a form with a payload field)'),
  response: { 200: z.object({ ok: z.boolean().optional(), outcome: z.string().optional(), challenge: z.string().optional() }) },
});

/** Slack's requests are small; a larger body is refused unread (413). */
const EVENT_BODY_LIMIT = 1024 * 1024;

/**
 * The adapters' event routes (Slack's Events API and interactions). In a scope of their own every
 * body arrives as raw bytes whatever its content type, since the platform's signature is over
 * those bytes; the adapter checks it and answers. A storage outage is thrown: a 503, and the
 * platform delivers again.
 */
export function registerPlatformWebhooks(app: FastifyInstance, webhooks: readonly PlatformWebhook[], logger: Logger): void {
  if (webhooks.length === 0) return;
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: EVENT_BODY_LIMIT }, (_request, body, done) => done(null, body));
    for (const webhook of webhooks) {
      scope.post(webhook.path, withContract(platformEventContract(webhook.summary)), async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        let answer;
        try {
          answer = await webhook.handle(raw, request.headers);
        } catch (error) {
          if (isConnectionError(error)) throw error;
          logger.error({ err: error, path: webhook.path }, 'platform event could not be handled or recorded');
          return reply.code(200).send({ ok: true, outcome: 'failed' });
        }
        return reply.code(answer.status).send(answer.body);
      });
    }
  });
}
