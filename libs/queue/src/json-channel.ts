import type { Redis } from 'ioredis';

/**
 * Subscribes a subscriber connection to one pub/sub channel and hands each message's JSON to
 * `onMessage`. A payload that is not JSON is not ours and is dropped, as is anything the handler
 * throws on it: a malformed notice must never take the listening process down.
 */
export async function subscribeJson(redis: Redis, channel: string, onMessage: (message: unknown) => void): Promise<void> {
  redis.on('message', (from: string, payload: string) => {
    if (from !== channel) return;
    try {
      onMessage(JSON.parse(payload));
    } catch {
      // not ours
    }
  });
  await redis.subscribe(channel);
}
