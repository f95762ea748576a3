import { getEvent } from '@herald/session';
import type { EventView } from '@herald/session';
import type { Db } from '@herald/db';
import { StreamRelay } from '@herald/queue';
import type { StoredStreamEntry, TurnDoneListener, TurnStreamListener, TurnStreamStore } from '@herald/queue';
import { waitingView } from './wait-views.ts';
import type { StreamEventData } from './contracts/message-views.ts';

/** A running turn's stream and the notices that say it grew; without them only the end is shown. */
export interface TurnStreamFollow {
  store: TurnStreamStore;
  listener: TurnStreamListener;
}

export interface FollowDependencies {
  db: Db;
  listener: TurnDoneListener;
  turnStream?: TurnStreamFollow | undefined;
}

/** What a follower of an event is told, in order; `id` is the resume point of stream events. */
export type FollowEvent =
  | { event: 'delta'; id?: string; data: StreamEventData['delta'] }
  | { event: 'tool'; id: string; data: StreamEventData['tool'] }
  | { event: 'compression'; id: string; data: StreamEventData['compression'] }
  | { event: 'waiting'; data: StreamEventData['waiting'] }
  | { event: 'done'; data: StreamEventData['done'] }
  | { event: 'error'; data: StreamEventData['error'] };

// The event row is read on a turn-done notice and at least this often (a lost notice, Redis down).
const CHECK_MS = 1000;

/** Reads an event's stream from `after` to its end, page by page. */
async function* entriesAfter(store: TurnStreamStore, eventId: string, after: string | undefined): AsyncGenerator<StoredStreamEntry> {
  let cursor = after;
  for (;;) {
    const page = await store.read(eventId, cursor);
    for (const entry of page) yield entry;
    if (page.length === 0) return;
    cursor = page[page.length - 1]!.id;
  }
}

/**
 * Follows one event's turn: pieces of text, tool calls and compressions as the worker publishes them (each once,
 * whichever worker runs or resumes the turn), the question it waits on, then its committed reply.
 * `lastId` (an SSE Last-Event-ID) resumes after what the client already has: the stream up to it
 * is replayed silently so the relay knows what was shown. Ends at done, failed, or on `signal`.
 */
export async function* followTurn(deps: FollowDependencies, eventId: string, lastId: string | undefined, signal: AbortSignal): AsyncGenerator<FollowEvent> {
  const relay = new StreamRelay();
  const stream = deps.turnStream;
  let cursor: string | undefined;
  let shown = '';
  if (stream && lastId !== undefined) {
    for await (const { id, entry } of entriesAfter(stream.store, eventId, undefined)) {
      const view = relay.take(entry);
      if (view?.type === 'delta') shown += view.text;
      cursor = id;
      if (id === lastId) break;
    }
  }
  const wakes = new Wakes(signal);
  const unwatch = [deps.listener.watch(eventId, () => wakes.poke(true)), stream?.listener.watch(eventId, () => wakes.poke(false))];
  try {
    let waitShown: string | undefined;
    for (;;) {
      if (stream) {
        for await (const { id, entry } of entriesAfter(stream.store, eventId, cursor)) {
          cursor = id;
          const view = relay.take(entry);
          if (view?.type === 'delta') {
            shown += view.text;
            yield { event: 'delta', id, data: { text: view.text } };
          } else if (view?.type === 'tool') {
            yield { event: 'tool', id, data: { name: view.name, status: view.status } };
          } else if (view?.type === 'compression') {
            yield { event: 'compression', id, data: { status: view.status } };
          }
        }
      }
      if (wakes.takeCheck()) {
        const event = await getEvent(deps.db, eventId);
        if (event === undefined) return yield { event: 'error', data: { code: 'not_found', message: 'no such event' } };
        if (event.status === 'done' || event.status === 'failed') return yield* ending(event, shown);
        if (event.waiting && event.waiting.id !== waitShown) {
          waitShown = event.waiting.id;
          yield { event: 'waiting', data: waitingView(event.waiting) };
        }
      }
      if (signal.aborted) return;
      await wakes.next(CHECK_MS);
    }
  } finally {
    for (const stop of unwatch) stop?.();
  }
}

/**
 * The end of a followed turn. The committed reply is the answer: what the stream did not show of it
 * (streaming off, a chat command, a compression note) goes out as a last delta, so a client that
 * joins the deltas has the reply; a failed turn (a dead letter, or a turn that ended failed with
 * its apology as the reply) ends with an error carrying that reply as its message.
 */
function* ending(event: EventView, shown: string): Generator<FollowEvent> {
  const reply = event.replyText ?? '';
  if (event.status === 'failed' || event.turnFailed) {
    yield { event: 'error', data: { code: 'turn_failed', message: reply || (event.error ?? 'the turn failed') } };
    return;
  }
  if (reply.startsWith(shown) && reply.length > shown.length) yield { event: 'delta', data: { text: reply.slice(shown.length) } };
  yield { event: 'done', data: { event_id: event.id, session_id: event.sessionId, reply: { text: reply } } };
}

/** Wake-ups of a follower: a notice (turn done: read the event; stream grew: read the stream), a timer, or abort. */
class Wakes {
  #wake: (() => void) | undefined;
  #notified = false;
  #check = true;
  #lastCheck = 0;
  readonly #signal: AbortSignal;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener('abort', () => this.#wake?.(), { once: true });
  }

  poke(check: boolean): void {
    this.#notified = true;
    if (check) this.#check = true;
    this.#wake?.();
  }

  /** Whether the event row is due a read: after a turn-done notice, or once a second. */
  takeCheck(): boolean {
    const due = this.#check || Date.now() - this.#lastCheck >= CHECK_MS;
    if (due) {
      this.#check = false;
      this.#lastCheck = Date.now();
    }
    return due;
  }

  next(timeoutMs: number): Promise<void> {
    if (this.#notified || this.#signal.aborted) {
      this.#notified = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        this.#notified = false;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#wake = done;
    });
  }
}
