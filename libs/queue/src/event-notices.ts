import { subscribeJson } from './json-channel.ts';
import type { NoticeBus } from './notice-bus.ts';

/**
 * Wakes in-process waiters when a notice on one channel names their event (`{eventIds: [...]}`),
 * over one shared subscription. Best effort: waiters also poll.
 */
export class EventNoticeListener {
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #bus: NoticeBus;
  readonly #channel: string;
  #started: Promise<void> | undefined;

  constructor(bus: NoticeBus, channel: string) {
    this.#bus = bus;
    this.#channel = channel;
  }

  start(): Promise<void> {
    this.#started ??= subscribeJson(this.#bus, this.#channel, (message) => {
      const ids = (message as { eventIds?: unknown } | null)?.eventIds;
      if (!Array.isArray(ids)) return;
      for (const id of ids) {
        for (const wake of this.#waiters.get(String(id)) ?? []) wake();
      }
    });
    return this.#started;
  }

  /** Returns an unsubscribe function; `wake` may be called more than once. */
  watch(eventId: string, wake: () => void): () => void {
    let set = this.#waiters.get(eventId);
    if (!set) {
      set = new Set();
      this.#waiters.set(eventId, set);
    }
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.#waiters.delete(eventId);
    };
  }
}
