import { afterAll, describe, expect, it } from 'vitest';
import { RedisNoticeBus, RedisTurnStreamStore, TurnStreamListener, TurnStreamWriter } from '@herald/queue';
import { waitFor } from '../../../test/support/wait.ts';
import { uniquePrefix } from '../../../test/support/test-database.ts';

const delta = (offset: number, text: string) => ({ type: 'delta' as const, step: 0, attempt: 'a', offset, text });

describe("a turn's stream writer", () => {
  const prefix = uniquePrefix();
  const bus = new RedisNoticeBus('redis://127.0.0.1:6379');
  const store = new RedisTurnStreamStore(bus.connection, prefix);
  afterAll(async () => {
    await bus.close();
  });

  it('sends a burst of deltas as one entry, woken followers see it, and a flush ends the window at once', async () => {
    const listener = new TurnStreamListener(bus, prefix);
    await listener.start();
    let woken = 0;
    listener.watch('event-burst', () => woken++);
    const writer = new TurnStreamWriter(store, ['event-burst'], (error) => {
      throw error;
    }, 60_000);
    for (const [offset, text] of [[0, 'Hel'], [3, 'lo, '], [7, 'world']] as const) writer.write(delta(offset, text));
    // The window is a minute long: only the flush sends it, and it sends it once.
    expect(await store.read('event-burst', undefined)).toEqual([]);
    await writer.flush();
    const entries = await store.read('event-burst', undefined);
    expect(entries.map((e) => e.entry)).toEqual([delta(0, 'Hello, world')]);
    await waitFor(async () => woken > 0, { what: "the followers' wake-up, published with the entry" });
  });

  it('writes on its own when the window ends, keeping tool lines apart and in order', async () => {
    const writer = new TurnStreamWriter(store, ['event-window'], (error) => {
      throw error;
    }, 5);
    writer.write(delta(0, 'Looking'));
    writer.write({ type: 'tool', name: 'web_search', status: 'start' });
    writer.write(delta(7, ' it up'));
    await waitFor(async () => (await store.read('event-window', undefined)).length === 3, { what: 'the window to end' });
    const entries = (await store.read('event-window', undefined)).map((e) => e.entry);
    expect(entries).toEqual([delta(0, 'Looking'), { type: 'tool', name: 'web_search', status: 'start' }, delta(7, ' it up')]);
  });
});
