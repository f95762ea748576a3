import { subscribeJson } from './json-channel.ts';
import type { NoticeBus } from './notice-bus.ts';

export function turnDoneChannel(prefix: string): string {
  return `${prefix}:turn-done`;
}

/** Tells waiting API callers that these events have their reply. Best effort: they also poll. */
export async function publishTurnDone(bus: NoticeBus, prefix: string, eventIds: string[]): Promise<void> {
  await bus.publish(turnDoneChannel(prefix), JSON.stringify({ eventIds }));
}

/**
 * Waits for events' completion notices on one shared subscriber connection. Waiters register an
 * event id and are woken when a notice names it.
 */
export class TurnDoneListener {
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #bus: NoticeBus;
  readonly #channel: string;
  #started: Promise<void> | undefined;

  constructor(bus: NoticeBus, prefix: string) {
    this.#bus = bus;
    this.#channel = turnDoneChannel(prefix);
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
