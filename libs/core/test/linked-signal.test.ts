import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignals } from '../src/linked-signal.ts';

describe('linkSignals', () => {
  it('aborts with the reason of the first source that aborts', () => {
    const worker = new AbortController();
    const turn = new AbortController();
    const link = linkSignals([worker.signal, turn.signal]);
    expect(link.signal.aborted).toBe(false);
    turn.abort(new Error('stopped by the person'));
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as Error).message).toBe('stopped by the person');
    // Aborted once: it no longer listens on the source that is still alive.
    expect(getEventListeners(worker.signal, 'abort')).toHaveLength(0);
  });

  it('is aborted at once when a source already is', () => {
    const done = AbortSignal.abort('gone');
    const link = linkSignals([new AbortController().signal, done]);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('gone');
  });

  it('lets go of a long-lived source when disposed, however many calls linked to it', () => {
    // The worker's hardStop lives as long as the process; every run and model call links to it.
    const worker = new AbortController();
    for (let call = 0; call < 1000; call++) {
      const link = linkSignals([worker.signal, new AbortController().signal]);
      // What an SDK does per request: a listener it never removes, on the call's signal only.
      link.signal.addEventListener('abort', () => undefined);
      link.dispose();
    }
    expect(getEventListeners(worker.signal, 'abort')).toHaveLength(0);
    // A disposed link does not abort with its source any more; a live one does.
    const disposed = linkSignals([worker.signal]);
    disposed.dispose();
    const live = linkSignals([worker.signal]);
    worker.abort('shutdown');
    expect(disposed.signal.aborted).toBe(false);
    expect(live.signal.reason).toBe('shutdown');
  });
});
