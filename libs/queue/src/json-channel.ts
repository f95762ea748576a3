import type { NoticeBus } from './notice-bus.ts';

/**
 * Subscribes to one notice channel and hands each notice's JSON to `onMessage`. A payload that is
 * not JSON is not ours and is dropped, as is anything the handler throws on it: a malformed notice
 * must never take the listening process down.
 */
export async function subscribeJson(bus: NoticeBus, channel: string, onMessage: (message: unknown) => void): Promise<void> {
  await bus.subscribe(channel, (payload) => {
    try {
      onMessage(JSON.parse(payload));
    } catch {
      // not ours
    }
  });
}
