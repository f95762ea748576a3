import { DeliveryError } from '@herald/session';
import type { DeliveryReceipt, OutboundDelivery, OutboundSender } from '@herald/session';

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Posts a report as JSON to `target.url`. Each POST carries the outbox key as Idempotency-Key, so
 * a receiver can drop the repeat of a send whose answer we never saw (a timeout is ambiguous).
 */
export class WebhookSender implements OutboundSender {
  readonly #fetch: typeof fetch;

  constructor(options: { fetch?: typeof fetch } = {}) {
    this.#fetch = options.fetch ?? fetch;
  }

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    // An earlier attempt got the 2xx but died before the receipt was stored: do not post again.
    const sent = item.progress.partsSent[0];
    if (sent !== undefined) return { messageIds: [sent] };
    const url = item.target.url;
    if (url === undefined) throw new DeliveryError('webhook target has no url', { retryable: false });
    await item.progress.beginPart(0, null);
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': item.idempotencyKey },
        body: JSON.stringify({ idempotency_key: item.idempotencyKey, source: item.source, text: item.text }),
        signal,
        redirect: 'error',
      });
    } catch (error) {
      throw new DeliveryError(`webhook POST failed: ${(error as Error).message}`, { retryable: true, ambiguous: true, cause: error });
    }
    const body = await response.text().catch(() => '');
    if (response.ok) {
      const id = `http-${response.status}`;
      await item.progress.partSent(0, id);
      return { messageIds: [id], status: response.status, body: body.slice(0, 500) };
    }
    // A refusal is an answer: nothing was taken, so the in-flight mark no longer applies.
    await item.progress.clearInFlight();
    const status = response.status;
    const retryable = status === 408 || status === 429 || status >= 500;
    const wait = status === 429 ? retryAfterMs(response.headers.get('retry-after')) : undefined;
    throw new DeliveryError(`webhook answered ${status}: ${body.slice(0, 200)}`, {
      retryable,
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    });
  }
}
