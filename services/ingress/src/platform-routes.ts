import type { FastifyInstance } from 'fastify';
import type { PlatformWebhook } from '@herald/platforms';
import type { Logger } from '@herald/core';
import { isConnectionError } from '@herald/db';
import { withContract } from './contracts/route-contract.ts';
import { z } from 'zod';

const platformEventContract = (summary: string) => ({
  summary,
  tags: ['platforms'],
  body: z.string().describe('the request exactly as the platform signed it (JSON, or a form with a payload field)'),
  response: { 200: z.object({ ok: z.boolean().optional(), outcome: z.string().optional(), challenge: z.string().optional() }) },
});

/** The platforms' requests are small (a Telegram update, a Slack event); a larger body is refused unread (413). */
const EVENT_BODY_LIMIT = 1024 * 1024;

/**
 * The adapters' event routes (Telegram's webhook, Slack's Events API and interactions). In a scope of their own every
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
        return reply
          .code(answer.status)
          .headers(answer.headers ?? {})
          .send(answer.body);
      });
    }
  });
}
