import { getEvent } from '@herald/session';
import type { Db, EventView } from '@herald/session';
import type { TurnDoneListener } from '@herald/queue';

// Pub/sub is the fast path; polling covers a lost notice (Redis restart, subscriber reconnect).
const POLL_MS = 500;

function finished(event: EventView | undefined): boolean {
  return event !== undefined && (event.status === 'done' || event.status === 'failed');
}

/** Waits up to `timeoutMs` for an event's turn to end; returns the event as it stands then. */
export async function waitForReply(
  db: Db,
  listener: TurnDoneListener,
  eventId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<EventView | undefined> {
  let wake: (() => void) | undefined;
  const unwatch = listener.watch(eventId, () => wake?.());
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await getEvent(db, eventId);
      const left = deadline - Date.now();
      if (finished(event) || left <= 0 || signal?.aborted) return event;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(POLL_MS, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    unwatch();
  }
}
