import { subscribeJson } from './json-channel.ts';
import type { NoticeBus } from './notice-bus.ts';

export type ControlAction = 'stop' | 'interrupt';

export function sessionControlChannel(prefix: string): string {
  return `${prefix}:session-control`;
}

/** Tells whichever worker runs the session to stop its turn or interrupt its model call. */
export async function publishSessionControl(bus: NoticeBus, prefix: string, sessionId: string, action: ControlAction): Promise<void> {
  await bus.publish(sessionControlChannel(prefix), JSON.stringify({ sessionId, action }));
}

/**
 * One subscription per worker process; sessions running here register a handler. Notices for
 * sessions running elsewhere are ignored, so every worker can share the channel.
 */
export class SessionControlListener {
  readonly #handlers = new Map<string, (action: ControlAction) => void>();
  readonly #bus: NoticeBus;
  readonly #channel: string;
  #started: Promise<void> | undefined;

  constructor(bus: NoticeBus, prefix: string) {
    this.#bus = bus;
    this.#channel = sessionControlChannel(prefix);
  }

  start(): Promise<void> {
    this.#started ??= subscribeJson(this.#bus, this.#channel, (message) => {
      const { sessionId, action } = message as { sessionId?: unknown; action?: unknown };
      if (action !== 'stop' && action !== 'interrupt') return;
      this.#handlers.get(String(sessionId))?.(action);
    });
    return this.#started;
  }

  register(sessionId: string, handler: (action: ControlAction) => void): () => void {
    this.#handlers.set(sessionId, handler);
    return () => {
      if (this.#handlers.get(sessionId) === handler) this.#handlers.delete(sessionId);
    };
  }
}
