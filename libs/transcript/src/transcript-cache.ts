import type { StoredMessage } from './stored-message.ts';

/** Where a cached transcript ends: the reader asks Postgres whether its message at `seq` still has `id`. */
export interface TranscriptTail {
  seq: number;
  id: string;
}

/**
 * A worker's parsed transcripts, per session, as its last turn read them (issue 41 point 6): the
 * next turn reads only the messages after the cached tail, so a 1,000-message session does not
 * cost its whole transcript every turn. Only ever a copy of committed rows: every read still goes
 * to Postgres and checks the tail (transcript.ts), so a turn another worker ran, or anything the
 * copy missed, is read from the database, never assumed. Bounded by messages held, least recently
 * used session first out; 0 turns it off.
 */
export class TranscriptCache {
  readonly #entries = new Map<string, StoredMessage[]>();
  readonly #maxMessages: number;
  #held = 0;

  constructor(maxMessages: number) {
    this.#maxMessages = maxMessages;
  }

  /** The cached messages, oldest first (not to be mutated), and marks the session recently used. */
  get(sessionId: string): StoredMessage[] | undefined {
    const messages = this.#entries.get(sessionId);
    if (messages === undefined) return undefined;
    this.#entries.delete(sessionId);
    this.#entries.set(sessionId, messages);
    return messages;
  }

  set(sessionId: string, messages: StoredMessage[]): void {
    this.delete(sessionId);
    if (messages.length === 0 || messages.length > this.#maxMessages) return;
    this.#entries.set(sessionId, messages);
    this.#held += messages.length;
    for (const [oldest, held] of this.#entries) {
      if (this.#held <= this.#maxMessages) break;
      this.#entries.delete(oldest);
      this.#held -= held.length;
    }
  }

  delete(sessionId: string): void {
    const messages = this.#entries.get(sessionId);
    if (messages === undefined) return;
    this.#entries.delete(sessionId);
    this.#held -= messages.length;
  }

  /** Messages held over all sessions (for tests and metrics). */
  get heldMessages(): number {
    return this.#held;
  }
}

/** The tail a cached transcript is validated by: its last message. */
export function tailOf(messages: StoredMessage[]): TranscriptTail | undefined {
  const last = messages[messages.length - 1];
  return last === undefined ? undefined : { seq: last.seq, id: last.id };
}
