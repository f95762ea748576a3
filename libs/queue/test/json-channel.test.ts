import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, publishTurnDone, TurnDoneListener } from '@herald/queue';
import { waitFor } from '../../../test/support/wait.ts';
import { uniquePrefix } from '../../../test/support/test-database.ts';

describe('listeners on a JSON pub/sub channel', () => {
  const prefix = uniquePrefix();
  const publisher = createRedis('redis://127.0.0.1:6379', 'producer');
  const subscriber = createRedis('redis://127.0.0.1:6379', 'subscriber');
  afterAll(() => {
    publisher.disconnect();
    subscriber.disconnect();
  });

  it('wakes the waiters a notice names, and drops notices that are not JSON or not its shape', async () => {
    const listener = new TurnDoneListener(subscriber, prefix);
    await listener.start();
    const woken: string[] = [];
    listener.watch('event-1', () => woken.push('event-1'));
    listener.watch('event-2', () => woken.push('event-2'));
    // Forged and broken notices on the same channel: none may wake anyone or stop the listener.
    await publisher.publish(`${prefix}:turn-done`, 'not json {');
    await publisher.publish(`${prefix}:turn-done`, 'null');
    await publisher.publish(`${prefix}:turn-done`, JSON.stringify({ eventIds: 'event-1' }));
    await publishTurnDone(publisher, prefix, ['event-2']);
    await waitFor(async () => woken.length > 0, { what: 'the valid notice' });
    // Redis delivers one connection's messages in order: the broken ones came first and woke nothing.
    expect(woken).toEqual(['event-2']);
  });
});
