import type { IncomingMessage } from 'node:http';
import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { HOOK_DELIVERY_QUEUE, hookQueues, SIGNATURE_HEADER, signBody } from '@herald/hooks';
import type { HookDeliveryJob } from '@herald/hooks';
import { FinalJobError, isLastAttempt, JobRuntime } from '@herald/jobs';
import type { Job } from '@herald/jobs';
import { Allowlist, BlockedAddressError, pinnedRequest } from '@herald/tools';
import type { PinnedRequest } from '@herald/tools';

/** Longest one POST to a url hook may take; it then fails and pg-boss retries it. */
const HOOK_POST_TIMEOUT_MS = 10_000;

export interface HookDeliveryOptions {
  db: Db;
  logger: Logger;
  /** HERALD_HOOKS_SECRET; without it nothing is sent (url hooks are refused at start then). */
  secret: string | undefined;
  /** HERALD_WEB_ALLOWLIST: loopback and private receivers must be listed, as for cron webhooks. */
  allowlist: readonly string[];
  tickMs: number;
}

/**
 * Sends url hook events: pg-boss's queue gives the retries with backoff and the dead letter; this
 * signs each body (HMAC-SHA256 in X-Herald-Signature) and posts it through the SSRF-checked,
 * address-pinned request the cron webhooks use. Any non-2xx answer fails the job, to be retried; a
 * receiver at a refused address (loopback, private, a name that does not resolve) fails it for good
 * at once, as a cron webhook's refusal does: no retry can change the answer.
 */
export class HookDeliveryService {
  readonly #options: HookDeliveryOptions;
  readonly #runtime: JobRuntime;
  readonly #allowlist: Allowlist;

  constructor(options: HookDeliveryOptions) {
    this.#options = options;
    this.#allowlist = new Allowlist(options.allowlist);
    this.#runtime = new JobRuntime({ db: options.db, logger: options.logger, queues: hookQueues(), maintenanceIntervalSeconds: 30 });
  }

  async start(): Promise<void> {
    await this.#runtime.start();
    this.#runtime.consume<HookDeliveryJob>(HOOK_DELIVERY_QUEUE, { concurrency: 2, pollMs: this.#options.tickMs }, (job, signal) => this.#send(job, signal));
  }

  stop(graceMs: number): Promise<void> {
    return this.#runtime.stop(graceMs);
  }

  /** The POST; a refused address (an IP literal refused at once, or a name in the pinned lookup) is final. */
  async #post(hook: string, event: string, url: string, request: PinnedRequest): Promise<IncomingMessage> {
    try {
      return await pinnedRequest(new URL(url), request);
    } catch (error) {
      if (!(error instanceof BlockedAddressError)) throw error;
      this.#options.logger.warn({ hook, event, reason: error.message }, 'url hook refused: its address is not allowed; it goes to the dead letter without retries');
      throw new FinalJobError(`url hook '${hook}' refused: ${error.message}`);
    }
  }

  async #send(job: Job<HookDeliveryJob>, signal: AbortSignal): Promise<void> {
    const { hook, url, event, body } = job.data;
    if (this.#options.secret === undefined) throw new Error('HERALD_HOOKS_SECRET is not set: url hook events cannot be signed');
    const response = await this.#post(hook, event, url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(this.#options.secret, body), 'x-herald-event': event, 'x-herald-delivery': job.id },
      body,
      allowlist: this.#allowlist,
      signal: AbortSignal.any([signal, AbortSignal.timeout(HOOK_POST_TIMEOUT_MS)]),
    });
    response.resume();
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return;
    if (isLastAttempt(job)) this.#options.logger.warn({ hook, event, status }, 'url hook delivery failed for good; it goes to the dead letter');
    throw new Error(`url hook '${hook}' answered ${status}`);
  }
}
