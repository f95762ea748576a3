import { getEvent } from '@herald/session';
import type { Db } from '@herald/db';
import type { EventView } from '@herald/session';
import type { TurnDoneListener } from '@herald/queue';

// Pub/sub is the fast path; polling covers a lost notice (Redis restart, subscriber reconnect),
// which is rare: a subscribed connection gets every notice. So the poll starts at POLL_MS and
// doubles up to POLL_MAX_MS: under load a waiter used to read its event every 500 ms (about three
// reads per turn that waits behind others, for nothing), and a lost notice now costs at most 4 s.
export const POLL_MS = 500;
export const POLL_MAX_MS = 4000;

/** Done, or parked on a question for the person: either way the caller has something to show. */
function finished(event: EventView | undefined): boolean {
  return event !== undefined && (event.status === 'done' || event.status === 'failed' || event.waiting !== null);
}

/** Waits up to `timeoutMs` for an event's turn to end or ask the person; returns the event as it stands then. */
export async function waitForReply(
  db: Db,
  listener: TurnDoneListener,
  eventId: string,
  timeoutMs: number,
  signal?: AbortSignal,
  /** The event was committed as pending a moment ago: skip the first read. */
  knownPending = false,
): Promise<EventView | undefined> {
  let wake: (() => void) | undefined;
  // A notice that lands while we read the event must not be lost until the next poll.
  let notified = false;
  const unwatch = listener.watch(eventId, () => {
    notified = true;
    wake?.();
  });
  try {
    const deadline = Date.now() + timeoutMs;
    let skip = knownPending;
    let pollMs = POLL_MS;
    for (;;) {
      notified = false;
      const event = skip ? undefined : await getEvent(db, eventId);
      skip = false;
      const left = deadline - Date.now();
      if (finished(event) || left <= 0 || signal?.aborted) return event ?? (await getEvent(db, eventId));
      await new Promise<void>((resolve) => {
        if (notified) {
          resolve();
          return;
        }
        const done = () => {
          wake = undefined;
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, Math.min(pollMs, left));
        wake = done;
      });
      pollMs = Math.min(POLL_MAX_MS, pollMs * 2);
    }
  } finally {
    unwatch();
  }
}
