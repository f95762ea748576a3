import pg from 'pg';
import { backoffMs, linkSignals, sleep } from '@herald/core';
import type { Logger } from '@herald/core';
import type { Kysely } from 'kysely';
import type { Database, StoredFile } from '@herald/db';
import { readBlob } from '@herald/attachments';
import { withDefaultUser } from '@herald/db';
import { contextFromTraceParent, recordDelivery, withSpan } from '@herald/telemetry';
import { claimOutbound, ClaimLostError, DeliveryError, markAttemptFailed, markDelivered, progressFor } from './outbox.ts';
import type { ClaimedRow, DeliveryReceipt, OutboundDelivery, OutboundFile, OutboundSender } from './outbox.ts';
import { draftMessageIds, dropDrafts } from './chat-drafts.ts';

export interface DeliveryConsumerOptions {
  db: Kysely<Database>;
  /** One sender per platform; rows of other platforms are left for a consumer that has one. */
  senders: ReadonlyMap<string, OutboundSender>;
  logger: Logger;
  /** How often the outbox is looked at without a notice. @default 1000 */
  pollIntervalMs?: number;
  /** Sends in progress at once (different chats; a chat has one at a time). @default 8 */
  batchSize?: number;
  /** How long a claim lasts; a consumer that dies mid-send loses the row after this. @default 60000 */
  claimMs?: number;
  /** Deadline of one send (all parts). Past it the send is ambiguous. @default 30000 */
  sendTimeoutMs?: number;
  /** Attempts before a row fails; rate-limit waits (429) do not count. @default 8 */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt. @default 1000 */
  retryBaseMs?: number;
  /** Longest retry delay. @default 300000 */
  retryCapMs?: number;
}

type ResolvedOptions = Required<Omit<DeliveryConsumerOptions, 'db' | 'senders' | 'logger'>>;

function resolve(options: DeliveryConsumerOptions): ResolvedOptions {
  const claimMs = options.claimMs ?? 60_000;
  return {
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    batchSize: options.batchSize ?? 8,
    claimMs,
    // The send must end well inside the claim, or a second consumer could take the row mid-send.
    sendTimeoutMs: Math.min(options.sendTimeoutMs ?? 30_000, Math.floor(claimMs / 2)),
    maxAttempts: options.maxAttempts ?? 8,
    retryBaseMs: options.retryBaseMs ?? 1000,
    retryCapMs: options.retryCapMs ?? 300_000,
  };
}

/**
 * Sends what the outbox holds. Any number of consumers may run: rows are claimed with SKIP LOCKED
 * and a claim token, and every write checks the token, so a consumer that stalled past its claim
 * cannot overwrite the result of the one that took the row over.
 */
export class DeliveryConsumer {
  readonly #db: Kysely<Database>;
  readonly #senders: ReadonlyMap<string, OutboundSender>;
  readonly #logger: Logger;
  readonly #options: ResolvedOptions;
  readonly #stop = new AbortController();
  #wake: (() => void) | undefined;
  #nudged = false;
  #loop: Promise<void> | undefined;
  readonly #active = new Set<Promise<void>>();

  constructor(options: DeliveryConsumerOptions) {
    this.#db = options.db;
    this.#senders = options.senders;
    this.#logger = options.logger;
    this.#options = resolve(options);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Looks at the outbox now instead of at the next poll (a reply was just committed). */
  nudge(): void {
    this.#nudged = true;
    this.#wake?.();
  }

  /** Stops claiming; sends in progress are aborted and handed back for a later attempt. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('delivery consumer stopping'));
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const platforms = [...this.#senders.keys()];
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      this.#nudged = false;
      // Sends run side by side up to the batch size; a slow chat does not hold up the others, and a
      // finished send frees its slot at once.
      const free = this.#options.batchSize - this.#active.size;
      if (free > 0) {
        let claimed: ClaimedRow[] = [];
        try {
          claimed = await claimOutbound(this.#db, { platforms, limit: free, claimMs: this.#options.claimMs });
          failures = 0;
        } catch (error) {
          failures++;
          this.#logger.warn({ err: error }, 'outbox claim failed; will retry');
          await sleep(backoffMs(failures, 200, 5000), this.#stop.signal).catch(() => undefined);
          continue;
        }
        for (const row of claimed) {
          const delivery: Promise<void> = this.#deliver(row).finally(() => {
            this.#active.delete(delivery);
            this.nudge();
          });
          this.#active.add(delivery);
        }
        if (claimed.length === free) continue;
      }
      if (this.#nudged) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.#options.pollIntervalMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.#wake = done;
      });
      this.#wake = undefined;
    }
    await Promise.all(this.#active);
  }

  #deliver(row: ClaimedRow): Promise<void> {
    const attributes = { 'herald.platform': row.platform, 'herald.outbox_id': row.id, 'herald.attempt': row.attempts };
    return withSpan('herald.delivery', attributes, () => this.#send(row), contextFromTraceParent(row.traceParent));
  }

  async #send(row: ClaimedRow): Promise<void> {
    const sender = this.#senders.get(row.platform);
    const logger = this.#logger.child({ outboxId: row.id, platform: row.platform, attempt: row.attempts });
    if (!sender) return;
    let receipt: DeliveryReceipt;
    try {
      receipt = await this.#sendWithin(sender, row);
    } catch (error) {
      await this.#failed(row, error, logger).catch((writeError: unknown) =>
        // The claim expires and the row is taken up again; its in-flight mark keeps it honest.
        logger.warn({ err: writeError }, 'could not record the failed attempt'),
      );
      return;
    }
    recordDelivery(row.platform, 'delivered');
    try {
      await markDelivered(this.#db, row, receipt);
      // The drafts are the answer's parts now (in the receipt); left behind, a later row would skip them.
      await dropDrafts(this.#db, row.idempotencyKey);
      logger.info({ messageIds: receipt.messageIds }, 'delivered');
    } catch (error) {
      // The parts are recorded as sent, so whoever takes the row over finishes without resending.
      logger.warn({ err: error }, 'delivered, but the receipt could not be stored yet');
    }
  }

  /**
   * One send, aborted at the send timeout or when the consumer stops. A link and a timer, not
   * AbortSignal.any: #stop lives as long as the process (linked-signal.ts).
   */
  async #sendWithin(sender: OutboundSender, row: ClaimedRow): Promise<DeliveryReceipt> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException('the send timed out', 'TimeoutError')), this.#options.sendTimeoutMs);
    const link = linkSignals([this.#stop.signal, timeout.signal]);
    try {
      const drafts = sender.drafts ? await draftMessageIds(this.#db, row.idempotencyKey) : [];
      const attachedFiles = await this.#attachedFiles(row.attachments ?? []);
      const delivery = { ...row, progress: progressFor(this.#db, row), drafts, attachedFiles };
      return row.file ? await this.#sendFile(sender, delivery, row.file, link.signal) : await sender.send(delivery, link.signal);
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
  }

  /** The bytes of the files a message carries inside it (an e-mail's attachments). */
  async #attachedFiles(files: readonly StoredFile[]): Promise<OutboundFile[]> {
    const read: OutboundFile[] = [];
    for (const file of files) {
      const bytes = await readBlob(this.#db, file.sha256);
      if (bytes === undefined) throw new DeliveryError(`the file ${file.name} is no longer stored`, { retryable: false });
      read.push({ ...file, bytes });
    }
    return read;
  }

  /** A file row: its bytes read from the blob, then the platform's file message. */
  async #sendFile(sender: OutboundSender, delivery: OutboundDelivery, file: StoredFile, signal: AbortSignal): Promise<DeliveryReceipt> {
    if (sender.sendFile === undefined) throw new DeliveryError(`${delivery.platform} cannot send files`, { retryable: false });
    const bytes = await readBlob(this.#db, file.sha256);
    if (bytes === undefined) throw new DeliveryError(`the file ${file.name} is no longer stored`, { retryable: false });
    return sender.sendFile(delivery, { ...file, bytes }, signal);
  }

  async #failed(row: ClaimedRow, error: unknown, logger: Logger): Promise<void> {
    if (error instanceof ClaimLostError) {
      logger.warn({}, 'claim lost mid-send; another consumer has the row');
      return;
    }
    const classified = DeliveryError.isInstance(error) ? error : new DeliveryError((error as Error)?.message ?? String(error), { retryable: true, cause: error });
    const rateLimited = classified.retryAfterMs !== undefined;
    const giveUp = !classified.retryable || (!rateLimited && row.attempts >= this.#options.maxAttempts);
    const message = `${classified.ambiguous ? 'ambiguous: ' : ''}${classified.message}`;
    if (giveUp) {
      logger.warn({ err: error }, 'delivery failed for good');
      recordDelivery(row.platform, 'failed');
      await markAttemptFailed(this.#db, row, message, null);
      return;
    }
    const delayMs = rateLimited ? (classified.retryAfterMs ?? 0) : backoffMs(row.attempts, this.#options.retryBaseMs, this.#options.retryCapMs);
    logger.warn({ err: error, delayMs, ambiguous: classified.ambiguous }, 'delivery attempt failed; will retry');
    recordDelivery(row.platform, 'retry');
    await markAttemptFailed(this.#db, row, message, new Date(Date.now() + delayMs));
    if (delayMs <= 0) this.nudge();
  }
}

/**
 * LISTENs for outbox notices (pg_notify('herald_outbox') from herald_finish_turn and
 * enqueueOutbound) on a dedicated connection, reconnecting after failures. Returns a stop function.
 * Notices only shorten the wait: the consumer's poll finds every row without them.
 */
export function listenForOutbox(databaseUrl: string, onNotice: () => void, logger: Logger): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | undefined;
  let failures = 0;
  const connect = async (): Promise<void> => {
    while (!stopped) {
      const next = new pg.Client({ connectionString: withDefaultUser(databaseUrl), connectionTimeoutMillis: 5000 });
      try {
        next.on('error', (error) => logger.warn({ err: error }, 'outbox listener connection failed'));
        next.on('notification', () => onNotice());
        next.on('end', () => {
          if (!stopped && client === next) void connect();
        });
        await next.connect();
        await next.query('LISTEN herald_outbox');
        client = next;
        failures = 0;
        // Anything committed while we were not listening.
        onNotice();
        return;
      } catch (error) {
        await next.end().catch(() => undefined);
        failures++;
        logger.warn({ err: error }, 'outbox listener could not connect; polling meanwhile');
        await sleep(backoffMs(failures, 500, 10_000));
      }
    }
  };
  void connect();
  return async () => {
    stopped = true;
    await client?.end().catch(() => undefined);
  };
}
