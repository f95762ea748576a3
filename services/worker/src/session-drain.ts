import type { Logger } from '@herald/core';
import { claimLease, LeaseLostError, openEvents, releaseLease, renewLease } from '@herald/session';
import type { Lease, PendingEvent } from '@herald/session';
import { runTurn } from './turn-runner.ts';
import type { TurnDependencies, TurnResult } from './turn-runner.ts';

export type DrainResult =
  | { kind: 'busy' }
  | { kind: 'drained'; turns: number }
  | { kind: 'lease-lost'; turns: number }
  | { kind: 'stopped'; turns: number };

/** The events the next turn takes: a crashed turn's own events first, else the oldest message. */
export function nextTurnEvents(open: PendingEvent[]): PendingEvent[] {
  const first = open[0];
  if (!first) return [];
  if (first.status === 'processing' && first.turnId !== null) {
    return open.filter((event) => event.turnId === first.turnId);
  }
  return [first];
}

export interface DrainOptions extends TurnDependencies {
  owner: string;
  /** Aborted when the worker shuts down: finish the current turn, take no new one. */
  stopping: AbortSignal;
  /** Aborted when the shutdown deadline is near: abandon the current turn (it resumes elsewhere). */
  hardStop: AbortSignal;
  onTurnDone(result: TurnResult): Promise<void>;
}

/**
 * Claims the session lease and runs turns until the inbox is empty. The lease is renewed in the
 * background; losing it aborts the running turn, and fenced writes refuse anything after that.
 */
export async function drainSession(options: DrainOptions, sessionId: string, logger: Logger): Promise<DrainResult> {
  const { db, config } = options;
  const lease = await claimLease(db, sessionId, options.owner, config.leaseTtlMs);
  if (!lease) return { kind: 'busy' };
  const lost = new AbortController();
  const renew = setInterval(() => {
    renewLease(db, lease, config.leaseTtlMs).then(
      (held) => {
        if (!held) lost.abort(new LeaseLostError(sessionId));
      },
      (error: unknown) => logger.warn({ err: error, sessionId }, 'lease renewal failed; will retry'),
    );
  }, Math.max(250, Math.floor(config.leaseTtlMs / 3)));
  const signal = AbortSignal.any([lost.signal, options.hardStop]);
  let turns = 0;
  let released = false;
  try {
    let events = nextTurnEvents(await openEvents(db, sessionId));
    while (events.length > 0) {
      const result = await runTurn(options, lease, events, signal);
      turns++;
      events = options.stopping.aborted ? [] : nextTurnEvents(await openEvents(db, sessionId));
      if (events.length === 0) {
        // Release before telling the waiters: a person who answers at once finds the session free
        // instead of waiting out the busy-lease retry.
        clearInterval(renew);
        await releaseLeaseQuietly(options, lease, logger);
        released = true;
      }
      await options.onTurnDone(result);
    }
    return options.stopping.aborted ? { kind: 'stopped', turns } : { kind: 'drained', turns };
  } catch (error) {
    if (LeaseLostError.isInstance(error) || lost.signal.aborted) {
      logger.warn({ sessionId, token: lease.token }, 'lease lost; turn abandoned');
      return { kind: 'lease-lost', turns };
    }
    if (options.hardStop.aborted) return { kind: 'stopped', turns };
    throw error;
  } finally {
    clearInterval(renew);
    if (!lost.signal.aborted && !released) await releaseLeaseQuietly(options, lease, logger);
  }
}

async function releaseLeaseQuietly(options: DrainOptions, lease: Lease, logger: Logger): Promise<void> {
  try {
    await releaseLease(options.db, lease);
  } catch (error) {
    // It expires on its own after the TTL; the next worker waits at most that long.
    logger.warn({ err: error, sessionId: lease.sessionId }, 'lease release failed');
  }
}
