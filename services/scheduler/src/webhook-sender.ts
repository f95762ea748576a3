import { isIP } from 'node:net';
import { DeliveryError } from '@herald/delivery';
import { Allowlist, assertAddressAllowed, BlockedAddressError, pinnedRequest, resolveAllowed } from '@herald/tools';
import type { LookupFunction } from '@herald/tools';
import type { DeliveryReceipt, OutboundDelivery, OutboundSender } from '@herald/delivery';

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Longest a webhook POST may take, answer included. */
const WEBHOOK_TIMEOUT_MS = 30_000;

interface WebhookAnswer {
  status: number;
  body: string;
  retryAfter: string | null;
}

/**
 * Posts a report as JSON to `target.url`. Each POST carries the outbox key as Idempotency-Key, so
 * a receiver can drop the repeat of a send whose answer we never saw (a timeout is ambiguous).
 */
export class WebhookSender implements OutboundSender {
  readonly #allowlist: Allowlist;
  readonly #lookup: LookupFunction | undefined;

  /** `allowlist`: HERALD_WEB_ALLOWLIST, the same exceptions the web tool has; `lookup`: for tests. */
  constructor(options: { allowlist?: readonly string[]; lookup?: LookupFunction } = {}) {
    this.#allowlist = new Allowlist(options.allowlist ?? []);
    this.#lookup = options.lookup;
  }

  #parse(url: string): URL {
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`scheme ${parsed.protocol}`);
      return parsed;
    } catch (error) {
      throw new DeliveryError(`webhook url ${url} is not an http(s) URL (${(error as Error).message})`, { retryable: false });
    }
  }

  /**
   * A job's webhook is chosen by whoever talks to the agent, so it must not reach into the cluster:
   * the name is resolved once, every address checked (loopback, private and link-local refused
   * unless allowlisted; a failed lookup refused too), and the socket connects to the checked
   * address. Redirects are not followed: a 3xx is an answer like any other.
   */
  async #resolve(url: URL): Promise<LookupFunction | undefined> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      if (isIP(host) !== 0) assertAddressAllowed(host, host, this.#allowlist);
      if (isIP(host) !== 0 || this.#allowlist.allowsHost(host)) return this.#lookup;
      const addresses = await resolveAllowed(host, this.#allowlist, this.#lookup);
      // The connection uses these very addresses: no second lookup that could answer differently.
      return () => Promise.resolve(addresses);
    } catch (error) {
      if (!(error instanceof BlockedAddressError)) throw error;
      throw new DeliveryError(`webhook ${host} refused: ${error.message} (HERALD_WEB_ALLOWLIST can allow it)`, { retryable: false });
    }
  }

  async #post(url: URL, item: OutboundDelivery, lookup: LookupFunction | undefined, signal: AbortSignal): Promise<WebhookAnswer> {
    const response = await pinnedRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': item.idempotencyKey },
      body: JSON.stringify({ idempotency_key: item.idempotencyKey, source: item.source, text: item.text }),
      allowlist: this.#allowlist,
      lookup,
      signal: AbortSignal.any([signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response) {
      if (size < 4096) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const retryAfter = response.headers['retry-after'];
    return { status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), retryAfter: typeof retryAfter === 'string' ? retryAfter : null };
  }

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    // An earlier attempt got the 2xx but died before the receipt was stored: do not post again.
    const sent = item.progress.partsSent[0];
    if (sent !== undefined) return { messageIds: [sent] };
    if (item.target.url === undefined) throw new DeliveryError('webhook target has no url', { retryable: false });
    const url = this.#parse(item.target.url);
    // Resolved and checked once, before the in-flight mark: a refused target was never contacted.
    const lookup = await this.#resolve(url);
    await item.progress.beginPart(0, null);
    let answer: WebhookAnswer;
    try {
      answer = await this.#post(url, item, lookup, signal);
    } catch (error) {
      throw new DeliveryError(`webhook POST failed: ${(error as Error).message}`, { retryable: true, ambiguous: true, cause: error });
    }
    return this.#receipt(answer, item);
  }

  async #receipt(answer: WebhookAnswer, item: OutboundDelivery): Promise<DeliveryReceipt> {
    const { status, body } = answer;
    if (status >= 200 && status < 300) {
      const id = `http-${status}`;
      await item.progress.partSent(0, id);
      return { messageIds: [id], status, body: body.slice(0, 500) };
    }
    // A refusal is an answer: nothing was taken, so the in-flight mark no longer applies.
    await item.progress.clearInFlight();
    const retryable = status === 408 || status === 429 || status >= 500;
    const wait = status === 429 ? retryAfterMs(answer.retryAfter) : undefined;
    throw new DeliveryError(`webhook answered ${status}: ${body.slice(0, 200)}`, {
      retryable,
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    });
  }
}
