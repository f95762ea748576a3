import { EventNoticeListener } from './event-notices.ts';
import type { NoticeBus } from './notice-bus.ts';

export function turnDoneChannel(prefix: string): string {
  return `${prefix}:turn-done`;
}

/** Tells waiting API callers that these events have their reply. Best effort: they also poll. */
export async function publishTurnDone(bus: NoticeBus, prefix: string, eventIds: string[]): Promise<void> {
  await bus.publish(turnDoneChannel(prefix), JSON.stringify({ eventIds }));
}

/** Waits for events' completion notices on one shared subscriber connection. */
export class TurnDoneListener extends EventNoticeListener {
  constructor(bus: NoticeBus, prefix: string) {
    super(bus, turnDoneChannel(prefix));
  }
}
