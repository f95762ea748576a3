import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { DeliveryError } from '@herald/delivery';
import { Allowlist, blockedReason } from '@herald/tools';
import type { DeliveryReceipt, OutboundDelivery, OutboundSender } from '@herald/delivery';

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
  readonly #allowlist: Allowlist;

  /** `allowlist`: HERALD_WEB_ALLOWLIST, the same exceptions the web tool has. */
  constructor(options: { fetch?: typeof fetch; allowlist?: readonly string[] } = {}) {
    this.#fetch = options.fetch ?? fetch;
    this.#allowlist = new Allowlist(options.allowlist ?? []);
  }

  /**
   * A job's webhook is chosen by whoever talks to the agent, so it must not reach into the cluster:
   * loopback, private and link-local addresses are refused unless allowlisted. Redirects are
   * refused outright below, so the resolved address is the one posted to (short of DNS rebinding
   * between this lookup and the connect).
   */
  async #assertReachable(url: string): Promise<void> {
    let host: string;
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`scheme ${parsed.protocol}`);
      host = parsed.hostname.replace(/^\[|\]$/g, '');
    } catch (error) {
      throw new DeliveryError(`webhook url ${url} is not an http(s) URL (${(error as Error).message})`, { retryable: false });
    }
    if (this.#allowlist.allowsHost(host)) return;
    const addresses = isIP(host) !== 0 ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((entry) => entry.address);
    for (const address of addresses) {
      const reason = this.#allowlist.allowsAddress(address) ? null : blockedReason(address);
      if (reason !== null) {
        throw new DeliveryError(`webhook ${host} refused: ${reason} (HERALD_WEB_ALLOWLIST can allow it)`, { retryable: false });
      }
    }
  }

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    // An earlier attempt got the 2xx but died before the receipt was stored: do not post again.
    const sent = item.progress.partsSent[0];
    if (sent !== undefined) return { messageIds: [sent] };
    const url = item.target.url;
    if (url === undefined) throw new DeliveryError('webhook target has no url', { retryable: false });
    await this.#assertReachable(url);
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
