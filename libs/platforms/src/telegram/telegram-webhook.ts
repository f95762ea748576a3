import { PLATFORM_FACTS } from '@herald/core';
import type { Logger } from '@herald/core';
import { isConnectionError } from '@herald/db';
import type { PlatformWebhook, WebhookAnswer } from '../platform-adapter.ts';
import type { TelegramIngress } from './telegram-ingress.ts';

const [WEBHOOK_PATH = ''] = PLATFORM_FACTS.telegram.eventRoutes;

function refusal(status: number, code: string, message: string, field: string | undefined): WebhookAnswer {
  return { status, body: { error: { code, message, ...(field === undefined ? {} : { field }) } } };
}

/** The body as JSON, or why it is not (the wording the ingress gives any other route's bad JSON). */
function parseJson(raw: Buffer): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (error) {
    return { error: `body: not valid JSON (${(error as Error).message})` };
  }
}

/**
 * POST /telegram/webhook: the secret header is checked, then the update is committed to the inbox
 * before the 200. A storage failure is thrown (the ingress answers 503, so Telegram delivers the
 * update again); a redelivery is recognised by its update id and ignored.
 */
async function answer(ingress: TelegramIngress, logger: Logger, raw: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): Promise<WebhookAnswer> {
  if (!ingress.verifySecret(headers['x-telegram-bot-api-secret-token'])) {
    return refusal(401, 'unauthorized', 'X-Telegram-Bot-Api-Secret-Token: missing or not TELEGRAM_WEBHOOK_SECRET', undefined);
  }
  const body = parseJson(raw);
  if ('error' in body) return refusal(400, 'invalid_request', body.error, 'body');
  if (!ingress.isUpdate(body.value)) {
    return refusal(400, 'invalid_request', 'update_id: expected a Telegram Update object with an integer update_id', 'update_id');
  }
  const update = body.value;
  try {
    const outcome = await ingress.handleUpdate(update);
    // Tells a proxy (or a curious operator) that a 200 here means the update is in Postgres.
    return { status: 200, body: { ok: true, outcome }, headers: { 'x-herald-delivery-accepted': 'durable' } };
  } catch (error) {
    if (isConnectionError(error)) throw error;
    // Anything else (handleUpdate dead-letters what fails twice): the platform gets its 200, never a 500.
    logger.error({ err: error, updateId: update.update_id }, 'telegram update could not be handled or recorded');
    return { status: 200, body: { ok: true, outcome: 'failed' } };
  }
}

/** Telegram's webhook route, served by the ingress like every platform's: public, its own secret header. */
export function telegramWebhook(ingress: TelegramIngress, logger: Logger): PlatformWebhook {
  return {
    path: WEBHOOK_PATH,
    summary: 'Telegram webhook: checks X-Telegram-Bot-Api-Secret-Token, commits the update, answers 200',
    handle: (raw, headers) => answer(ingress, logger, raw, headers),
  };
}
