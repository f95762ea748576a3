import { sleep } from '@herald/core';

/**
 * How far apart this process spaces its calls of each Web API method, from Slack's published
 * tiers: chat.postMessage is about one message per second per channel, with a workspace-wide
 * ceiling (spaced here at four a second, so a cron job posting to fifty channels trickles out
 * instead of tripping it); chat.update and reactions are Tier 3 (about 50 a minute), spaced per
 * channel so that several live turns do not queue behind each other. A 429 pauses the method for
 * as long as Slack asks, for every channel, before anything else is tried.
 */
export const SLACK_METHOD_SPACING: Readonly<Record<string, { perChannelMs: number; globalMs: number }>> = {
  'chat.postMessage': { perChannelMs: 1000, globalMs: 250 },
  'chat.postEphemeral': { perChannelMs: 1000, globalMs: 250 },
  'chat.update': { perChannelMs: 1000, globalMs: 100 },
  'chat.delete': { perChannelMs: 1000, globalMs: 100 },
  'reactions.add': { perChannelMs: 1000, globalMs: 100 },
  'reactions.remove': { perChannelMs: 1000, globalMs: 100 },
};

/** Reserves each call's slot before it is made: concurrent callers queue in arrival order. */
export class SlackRateGate {
  readonly #next = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Waits until `method` may be called for `channel`; unknown methods pass at once. */
  async take(method: string, channel: string, signal?: AbortSignal): Promise<void> {
    const spacing = SLACK_METHOD_SPACING[method];
    if (spacing === undefined) return;
    const now = this.#now();
    const globalAt = Math.max(now, this.#next.get(method) ?? 0);
    const channelAt = Math.max(now, this.#next.get(`${method}:${channel}`) ?? 0);
    const at = Math.max(globalAt, channelAt);
    this.#next.set(method, at + spacing.globalMs);
    this.#next.set(`${method}:${channel}`, at + spacing.perChannelMs);
    if (at > now) await sleep(at - now, signal);
  }

  /** Slack said 429: nothing more of this method until `retryAfterMs` from now. */
  pause(method: string, retryAfterMs: number): void {
    this.#next.set(method, Math.max(this.#next.get(method) ?? 0, this.#now() + retryAfterMs));
  }
}
