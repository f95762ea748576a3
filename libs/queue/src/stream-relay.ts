import type { CompressionStatus, TurnStreamEntry } from './turn-stream.ts';

/** What a follower shows of a turn: new text, a tool call starting or ending, a compression. */
export type StreamView = { type: 'delta'; text: string } | { type: 'tool'; name: string; status: 'start' | 'end' | 'error' } | { type: 'compression'; status: CompressionStatus };

/**
 * Turns a stream's entries into what a follower shows, each piece of text once. A model call that
 * is retried, or resumed on another worker after a crash, streams its step again from offset 0:
 * the relay remembers how much of each step it has shown and passes on only what lies beyond it,
 * so a follower sees no repeats. (A retried call that words the text differently cannot take back
 * what was shown; the committed reply at the end is the answer.)
 */
export class StreamRelay {
  readonly #shown = new Map<number, number>();

  take(entry: TurnStreamEntry): StreamView | undefined {
    switch (entry.type) {
      case 'delta': {
        const shown = this.#shown.get(entry.step) ?? 0;
        const end = entry.offset + entry.text.length;
        if (end <= shown) return undefined;
        this.#shown.set(entry.step, end);
        return { type: 'delta', text: entry.text.slice(Math.max(0, shown - entry.offset)) };
      }
      case 'tool':
        return { type: 'tool', name: entry.name, status: entry.status };
      case 'compression':
        return { type: 'compression', status: entry.status };
    }
  }
}
