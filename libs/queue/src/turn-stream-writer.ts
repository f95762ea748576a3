import type { TurnStreamEntry, TurnStreamStore } from './turn-stream.ts';

/**
 * How long pieces gather before a write, once the stream's first piece went. A provider sends text
 * as many small deltas; gathering them costs a follower this much at most, and saves a store round
 * trip per delta (the worker's largest cost per streamed turn after its SQL). The first piece goes
 * at once, so the time to the first text is not touched (42 ms at p95, docs/benchmarks.md).
 */
export const STREAM_BATCH_MS = 20;

/**
 * A turn's side of its stream: entries go out in order, one write in flight at a time; the first
 * piece at once, later pieces of text merged into one entry when they arrive within STREAM_BATCH_MS
 * or pile up behind a write. Failures are reported and dropped: the stream is a view, never the record.
 */
export class TurnStreamWriter {
  readonly #store: TurnStreamStore;
  readonly #eventIds: readonly string[];
  readonly #onError: (error: unknown) => void;
  readonly #batchMs: number;
  #pending: TurnStreamEntry[] = [];
  #flushing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #started = false;

  constructor(store: TurnStreamStore, eventIds: readonly string[], onError: (error: unknown) => void, batchMs = STREAM_BATCH_MS) {
    this.#store = store;
    this.#eventIds = eventIds;
    this.#onError = onError;
    this.#batchMs = batchMs;
  }

  write(entry: TurnStreamEntry): void {
    const last = this.#pending[this.#pending.length - 1];
    if (entry.type === 'delta' && last?.type === 'delta' && last.attempt === entry.attempt && last.offset + last.text.length === entry.offset) {
      this.#pending[this.#pending.length - 1] = { ...last, text: last.text + entry.text };
    } else {
      this.#pending.push(entry);
    }
    // A write in flight takes what piles up behind it when it ends; otherwise the first piece goes
    // now and a later one opens the window.
    if (this.#flushing !== undefined || this.#timer !== undefined) return;
    if (!this.#started) {
      this.#started = true;
      this.#startDrain();
    } else {
      this.#timer = setTimeout(() => this.#startDrain(), this.#batchMs);
    }
  }

  /** Resolves once everything written so far is in the store (or failed); a waiting window ends now. */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) this.#startDrain();
    while (this.#flushing) await this.#flushing;
  }

  #startDrain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing ??= this.#drain();
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
