import type { StoredMessage } from './stored-message.ts';

/** Where a cached transcript ends: the reader asks Postgres whether its message at `seq` still has `id`. */
export interface TranscriptTail {
  seq: number;
  id: string;
}

/**
 * What one cached message weighs, roughly: its strings as V8 keeps them (up to two bytes a
 * character) and the object around them. A bound in messages alone let a mix of long messages (a
 * tool's output, a pasted document) hold many times what the same count of short ones does.
 */
export function messageWeight(message: StoredMessage): number {
  let chars = message.content.length + message.id.length + (message.turnId?.length ?? 0);
  for (const call of message.toolCalls ?? []) chars += call.id.length + call.name.length + call.arguments.length;
  return 2 * chars + MESSAGE_OVERHEAD_BYTES;
}

/** The object, its fields and its Date, in bytes (a V8 heap snapshot of the soak's workers). */
const MESSAGE_OVERHEAD_BYTES = 200;

interface Entry {
  messages: StoredMessage[];
  bytes: number;
}

/**
 * A worker's parsed transcripts, per session, as its last turn read them (issue 41 point 6): the
 * next turn reads only the messages after the cached tail, so a 1,000-message session does not
 * cost its whole transcript every turn. Only ever a copy of committed rows: every read still goes
 * to Postgres and checks the tail (transcript.ts), so a turn another worker ran, or anything the
 * copy missed, is read from the database, never assumed. Bounded by messages held and by their
 * weight (messageWeight), least recently used session first out; 0 turns it off.
 */
export class TranscriptCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxMessages: number;
  readonly #maxBytes: number;
  #held = 0;
  #bytes = 0;

  constructor(maxMessages: number, maxBytes = Number.POSITIVE_INFINITY) {
    this.#maxMessages = maxMessages;
    this.#maxBytes = maxBytes;
  }

  /** The cached messages, oldest first (not to be mutated), and marks the session recently used. */
  get(sessionId: string): StoredMessage[] | undefined {
    const entry = this.#entries.get(sessionId);
    if (entry === undefined) return undefined;
    this.#entries.delete(sessionId);
    this.#entries.set(sessionId, entry);
    return entry.messages;
  }

  set(sessionId: string, messages: StoredMessage[]): void {
    const bytes = this.#weigh(this.#entries.get(sessionId), messages);
    this.delete(sessionId);
    if (messages.length === 0 || messages.length > this.#maxMessages || bytes > this.#maxBytes) return;
    this.#entries.set(sessionId, { messages, bytes });
    this.#held += messages.length;
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#held <= this.#maxMessages && this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#held -= entry.messages.length;
      this.#bytes -= entry.bytes;
    }
  }

  /** The weight of `messages`; only what follows a cached prefix of them is weighed again (a turn adds a few to a long session). */
  #weigh(previous: Entry | undefined, messages: StoredMessage[]): number {
    const known = previous?.messages;
    const extendsCached = known !== undefined && known.length <= messages.length && known.length > 0 && messages[known.length - 1] === known[known.length - 1];
    let bytes = extendsCached ? previous!.bytes : 0;
    for (let index = extendsCached ? known!.length : 0; index < messages.length; index++) bytes += messageWeight(messages[index]!);
    return bytes;
  }

  delete(sessionId: string): void {
    const entry = this.#entries.get(sessionId);
    if (entry === undefined) return;
    this.#entries.delete(sessionId);
    this.#held -= entry.messages.length;
    this.#bytes -= entry.bytes;
  }

  /** Messages held over all sessions (for tests and metrics). */
  get heldMessages(): number {
    return this.#held;
  }

  /** Their weight (messageWeight), in bytes. */
  get heldBytes(): number {
    return this.#bytes;
  }
}

/** The tail a cached transcript is validated by: its last message. */
export function tailOf(messages: StoredMessage[]): TranscriptTail | undefined {
  const last = messages[messages.length - 1];
  return last === undefined ? undefined : { seq: last.seq, id: last.id };
}
