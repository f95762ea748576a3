import { storedTarget } from '@herald/core';
import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import type { OutboundSender } from '@herald/delivery';
import { sessionChat } from '@herald/session';

/** Telegram shows "typing" for about 5 s per call; Discord for about 10 s. */
const DEFAULT_INTERVAL_MS = 4500;

/**
 * Shows "typing..." in a chat while its session's turns run on this worker. Best effort: a failed
 * call is logged at debug level and the turn goes on.
 */
export class TypingIndicator {
  readonly #db: Db;
  readonly #senders: ReadonlyMap<string, OutboundSender>;
  readonly #logger: Logger;
  readonly #intervalMs: number;

  constructor(options: { db: Db; senders: ReadonlyMap<string, OutboundSender>; logger: Logger; intervalMs?: number }) {
    this.#db = options.db;
    this.#senders = options.senders;
    this.#logger = options.logger;
    this.#intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  }

  /** Starts the indicator for the session's chat; returns the function that stops it. */
  start(sessionId: string, platform: string): () => void {
    const sender = this.#senders.get(platform);
    if (!sender?.typing) return () => undefined;
    const stop = new AbortController();
    void this.#run(sender, sessionId, stop.signal);
    return () => stop.abort();
  }

  async #run(sender: OutboundSender, sessionId: string, signal: AbortSignal): Promise<void> {
    const session = await sessionChat(this.#db, sessionId).catch(() => undefined);
    if (!session) return;
    const target = storedTarget({
      account: session.account ?? undefined,
      chatId: session.chatId,
      chatType: session.chatType,
      threadId: session.threadId ?? undefined,
    });
    while (!signal.aborted) {
      try {
        await sender.typing?.(target, AbortSignal.any([signal, AbortSignal.timeout(this.#intervalMs)]));
      } catch (error) {
        if (!signal.aborted) this.#logger.debug({ err: error, sessionId }, 'typing indicator failed');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#intervalMs);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}
