import type { TurnStreamEntry, TurnStreamStore } from './turn-stream.ts';

/**
 * A turn's side of its stream: entries go out in order, one write in flight at a time, and pieces
 * of text that pile up behind a write are merged into one entry (so a slow store costs batching,
 * not latency per piece). Failures are reported and dropped: the stream is a view, never the record.
 */
export class TurnStreamWriter {
  readonly #store: TurnStreamStore;
  readonly #eventIds: readonly string[];
  readonly #onError: (error: unknown) => void;
  #pending: TurnStreamEntry[] = [];
  #flushing: Promise<void> | undefined;

  constructor(store: TurnStreamStore, eventIds: readonly string[], onError: (error: unknown) => void) {
    this.#store = store;
    this.#eventIds = eventIds;
    this.#onError = onError;
  }

  write(entry: TurnStreamEntry): void {
    const last = this.#pending[this.#pending.length - 1];
    if (entry.type === 'delta' && last?.type === 'delta' && last.attempt === entry.attempt && last.offset + last.text.length === entry.offset) {
      this.#pending[this.#pending.length - 1] = { ...last, text: last.text + entry.text };
    } else {
      this.#pending.push(entry);
    }
    this.#flushing ??= this.#drain();
  }

  /** Resolves once everything written so far is in the store (or failed). */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        // The event list is read at each write: messages steered into the turn join its stream.
        await this.#store.append([...this.#eventIds], batch).catch(this.#onError);
      }
    } finally {
      this.#flushing = undefined;
    }
  }
}
