import { afterAll, describe, expect, it } from 'vitest';
import { RedisNoticeBus, RedisTurnStreamStore, TurnStreamListener, TurnStreamWriter } from '@herald/queue';
import { waitFor } from '../../../test/support/wait.ts';
import { uniquePrefix } from '../../../test/support/test-database.ts';

const delta = (offset: number, text: string) => ({ type: 'delta' as const, step: 0, attempt: 'a', offset, text });
const failOn = (error: unknown) => {
  throw error;
};

describe("a turn's stream writer", () => {
  const prefix = uniquePrefix();
  const bus = new RedisNoticeBus('redis://127.0.0.1:6379');
  const store = new RedisTurnStreamStore(bus.connection, prefix);
  afterAll(async () => {
    await bus.close();
  });
  const entries = async (eventId: string) => (await store.read(eventId, undefined)).map((e) => e.entry);

  it('sends the first piece at once, gathers the ones after it into one entry, and a flush ends the window', async () => {
    const listener = new TurnStreamListener(bus, prefix);
    await listener.start();
    let woken = 0;
    listener.watch('event-burst', () => woken++);
    const writer = new TurnStreamWriter(store, ['event-burst'], failOn, 60_000);
    writer.write(delta(0, 'Hel'));
    await waitFor(async () => (await entries('event-burst')).length === 1, { what: 'the first piece, without waiting for the window' });
    await waitFor(async () => woken > 0, { what: "the followers' wake-up, published with the entry" });
    for (const [offset, text] of [
      [3, 'lo, '],
      [7, 'world'],
    ] as const)
      writer.write(delta(offset, text));
    // The window is a minute long: only the flush sends the rest, and it sends it as one entry.
    expect(await entries('event-burst')).toEqual([delta(0, 'Hel')]);
    await writer.flush();
    expect(await entries('event-burst')).toEqual([delta(0, 'Hel'), delta(3, 'lo, world')]);
  });

  it('writes on its own when the window ends, keeping tool lines apart and in order', async () => {
    const writer = new TurnStreamWriter(store, ['event-window'], failOn, 5);
    writer.write(delta(0, 'Looking'));
    await writer.flush();
    writer.write({ type: 'tool', name: 'web_search', status: 'start' });
    writer.write(delta(7, ' it up'));
    await waitFor(async () => (await entries('event-window')).length === 3, { what: 'the window to end' });
    expect(await entries('event-window')).toEqual([delta(0, 'Looking'), { type: 'tool', name: 'web_search', status: 'start' }, delta(7, ' it up')]);
  });
});
