import { afterAll, describe, expect, it } from 'vitest';
import { publishTurnDone, RedisNoticeBus, TurnDoneListener } from '@herald/queue';
import { waitFor } from '../../../test/support/wait.ts';
import { uniquePrefix } from '../../../test/support/test-database.ts';

describe('listeners on a JSON pub/sub channel', () => {
  const prefix = uniquePrefix();
  const bus = new RedisNoticeBus('redis://127.0.0.1:6379');
  afterAll(async () => {
    await bus.close();
  });

  it('wakes the waiters a notice names, and drops notices that are not JSON or not its shape', async () => {
    const listener = new TurnDoneListener(bus, prefix);
    await listener.start();
    const woken: string[] = [];
    listener.watch('event-1', () => woken.push('event-1'));
    listener.watch('event-2', () => woken.push('event-2'));
    // Forged and broken notices on the same channel: none may wake anyone or stop the listener.
    await bus.publish(`${prefix}:turn-done`, 'not json {');
    await bus.publish(`${prefix}:turn-done`, 'null');
    await bus.publish(`${prefix}:turn-done`, JSON.stringify({ eventIds: 'event-1' }));
    await publishTurnDone(bus, prefix, ['event-2']);
    await waitFor(async () => woken.length > 0, { what: 'the valid notice' });
    // Redis delivers one connection's messages in order (the bus publishes on one): the broken ones came first and woke nothing.
    expect(woken).toEqual(['event-2']);
  });
});
