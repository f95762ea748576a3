import { backoffMs, linkSignals, sleep } from '@herald/core';
import type { LinkedSignal, Logger } from '@herald/core';
import { compressCommandOf } from '@herald/inbox';
import { claimLease, LeaseLostError, openInbox, releaseLease, renewLease } from '@herald/leases';
import { isConnectionError } from '@herald/db';
import type { Inbox, Lease, LeasedSession, PendingEvent } from '@herald/leases';
import type { QueueMode } from '@herald/db';
import type { ControlAction } from '@herald/queue';
import { recordTurn, setSpanAttributes, withSpan } from '@herald/telemetry';
import { runTurn } from './turn-runner.ts';
import type { TurnControl, TurnDependencies, TurnResult } from './turn-context.ts';

export type DrainResult = { kind: 'busy' } | { kind: 'drained'; turns: number } | { kind: 'lease-lost'; turns: number } | { kind: 'stopped'; turns: number };

/**
 * The events the next turn takes: a crashed turn's own events first; in collect mode everything
 * waiting, merged into one turn; otherwise the oldest message.
 */
export function nextTurnEvents(inbox: Inbox): PendingEvent[] {
  const first = inbox.events[0];
  if (!first) return [];
  if (first.status === 'processing' && first.turnId !== null) {
    return inbox.events.filter((event) => event.turnId === first.turnId);
  }
  // A /compress runs on its own, never merged into a turn as text for the model.
  if (inbox.queueMode !== 'collect' || compressCommandOf(first.text)) return [first];
  const pending = inbox.events.filter((event) => event.status === 'pending');
  const command = pending.findIndex((event) => compressCommandOf(event.text) !== undefined);
  return command < 0 ? pending : pending.slice(0, command);
}

export interface DrainOptions extends TurnDependencies {
  owner: string;
  /** Aborted when the worker shuts down: finish the current turn, take no new one. */
  stopping: AbortSignal;
  /** Aborted when the shutdown deadline is near: abandon the current turn (it resumes elsewhere). */
  hardStop: AbortSignal;
  onTurnDone(result: TurnResult): Promise<void>;
  /** Subscribes to /stop and interrupt notices for the session while it runs here. */
  registerControl(sessionId: string, handler: (action: ControlAction) => void): () => void;
  /** Called when turns are about to run (a chat's typing indicator); returns the stop function. */
  onSessionActive?: ((sessionId: string, platform: string) => () => void) | undefined;
}

/** Per-turn control: a person's /stop ends the turn, an interrupt drops the running model call. */
class RunControl {
  #stop = new AbortController();
  #interrupt = new AbortController();
  #turn: LinkedSignal | undefined;
  readonly #run: LinkedSignal;
  readonly #base: AbortSignal;
  readonly #ensureLease: () => Promise<void>;
  readonly #compacted: Set<string>;

  constructor(run: LinkedSignal, ensureLease: () => Promise<void>, compacted: Set<string>) {
    this.#run = run;
    this.#base = run.signal;
    this.#ensureLease = ensureLease;
    this.#compacted = compacted;
  }

  /** The run is over: nothing listens on the worker's signals for it any more. */
  close(): void {
    this.#turn?.dispose();
    this.#run.dispose();
  }

  handle(action: ControlAction): void {
    if (action === 'stop') this.#stop.abort(new Error('stopped by the person'));
    else this.#interrupt.abort(new Error('interrupted by a new message'));
  }

  forTurn(): TurnControl {
    this.#stop = new AbortController();
    const stop = this.#stop;
    // The previous turn is over: its link lets go of the run's signal (linked-signal.ts).
    this.#turn?.dispose();
    this.#turn = linkSignals([this.#base, stop.signal]);
    return {
      signal: this.#turn.signal,
      stopRequested: () => stop.signal.aborted,
      modelSignal: () => {
        if (this.#interrupt.signal.aborted) this.#interrupt = new AbortController();
        return this.#interrupt.signal;
      },
      ensureLease: this.#ensureLease,
      compacted: this.#compacted,
    };
  }
}

/**
 * Claims the session lease and runs turns until the inbox is empty. The lease is renewed in the
 * background; losing it aborts the running turn, and fenced writes refuse anything after that.
 */
export async function drainSession(options: DrainOptions, sessionId: string, logger: Logger): Promise<DrainResult> {
  const compacted = new Set<string>();
  let result = await drainOne(options, sessionId, logger, compacted);
  let turns = 0;
  // A compression ended the session: its open events moved to the child, which this worker
  // drains next (their wake-ups named the old session). Busy means another worker has it.
  while (result.kind === 'moved') {
    turns += result.turns;
    result = await drainOne(options, result.childId, logger, compacted);
  }
  return result.kind === 'busy' && turns > 0 ? { kind: 'drained', turns } : 'turns' in result ? { ...result, turns: result.turns + turns } : result;
}

async function drainOne(options: DrainOptions, sessionId: string, logger: Logger, compacted: Set<string>): Promise<DrainResult | { kind: 'moved'; childId: string; turns: number }> {
  const { db, config } = options;
  const lease = await claimLease(db, sessionId, options.owner, config.roles.worker.leaseTtlMs);
  if (!lease) return { kind: 'busy' };
  const { lost, renew, ensureLease } = keepLease(config.roles.worker.leaseTtlMs, db, lease, logger);
  // A link, not AbortSignal.any: hardStop lives as long as the worker (linked-signal.ts).
  const control = new RunControl(linkSignals([lost.signal, options.hardStop]), ensureLease, compacted);
  const unregister = options.registerControl(sessionId, (action) => control.handle(action));
  let turns = 0;
  let released = false;
  let stopActivity: (() => void) | undefined;
  let childId: string | undefined;
  try {
    // The claim read the inbox after taking the session (see claimLease).
    let inbox = lease.inbox;
    let session = lease.session;
    let events = nextTurnEvents(inbox);
    if (events.length > 0) stopActivity = options.onSessionActive?.(sessionId, lease.session.platform);
    while (events.length > 0) {
      const result = await measuredTurn(options, lease, session, inbox.queueMode, events, control.forTurn());
      turns++;
      // The session's first turn stored its prompt: the next turns send it instead of building one.
      if (result.prompt !== undefined) session = { ...session, systemPrompt: result.prompt };
      childId = result.childSessionId;
      // The turn's last write read the inbox already (and let the lease go when it was empty).
      if (result.next?.released === true) {
        clearInterval(renew);
        released = true;
      }
      if (options.stopping.aborted || childId !== undefined || released) events = [];
      else {
        inbox = result.next ?? (await openInbox(db, sessionId));
        events = nextTurnEvents(inbox);
      }
      if (events.length === 0 && !released) {
        // Release before telling the waiters: a person who answers at once finds the session free
        // instead of waiting out the busy-lease retry.
        clearInterval(renew);
        await releaseLeaseQuietly(options, lease, logger);
        released = true;
      }
      await options.onTurnDone(result);
    }
    if (childId !== undefined && !options.stopping.aborted) return { kind: 'moved', childId, turns };
    return options.stopping.aborted ? { kind: 'stopped', turns } : { kind: 'drained', turns };
  } catch (error) {
    if (LeaseLostError.isInstance(error) || lost.signal.aborted) {
      logger.warn({ sessionId, token: lease.token }, 'lease lost; turn abandoned');
      return { kind: 'lease-lost', turns };
    }
    if (options.hardStop.aborted) return { kind: 'stopped', turns };
    throw error;
  } finally {
    control.close();
    stopActivity?.();
    unregister();
    clearInterval(renew);
    if (!lost.signal.aborted && !released) await releaseLeaseQuietly(options, lease, logger);
  }
}

/**
 * Keeps the session lease renewed while the session runs; a lost lease aborts `lost`. A worker
 * that stalled (CPU starvation, a long GC) may wake up after its lease expired and was taken over:
 * before each model call a stale lease is confirmed first (`ensureLease`), so a stalled worker does
 * not send a second request for a session another worker now runs.
 */
function keepLease(ttlMs: number, db: DrainOptions['db'], lease: Lease, logger: Logger) {
  const { sessionId } = lease;
  const lost = new AbortController();
  let renewedAt = performance.now();
  const renewNow = async (): Promise<boolean> => {
    const startedAt = performance.now();
    const held = await renewLease(db, lease, ttlMs);
    if (held) renewedAt = startedAt;
    else lost.abort(new LeaseLostError(sessionId));
    return held;
  };
  const renew = setInterval(
    () => {
      renewNow().catch((error: unknown) => logger.warn({ err: error, sessionId }, 'lease renewal failed; will retry'));
    },
    Math.max(250, Math.floor(ttlMs / 3)),
  );
  const ensureLease = async () => {
    if (performance.now() - renewedAt <= ttlMs / 2) return;
    if (!(await renewNow())) throw new LeaseLostError(sessionId);
  };
  return { lost, renew, ensureLease };
}

/** One turn, counted by outcome with its wall time, and traced. */
function measuredTurn(options: DrainOptions, lease: Lease, session: LeasedSession, queueMode: QueueMode, events: PendingEvent[], control: TurnControl): Promise<TurnResult> {
  const started = performance.now();
  return withSpan('herald.turn', { 'herald.session_id': lease.sessionId, 'herald.events': events.length }, async () => {
    const result = await runTurn(options, lease, session, queueMode, events, control);
    recordTurn(result.outcome, (performance.now() - started) / 1000);
    setSpanAttributes({ 'herald.turn.outcome': result.outcome });
    return result;
  });
}

/**
 * Releases with a few quick retries: a storage blip often kills the pooled connection the release
 * would use, and an unreleased lease costs the next worker a TTL of waiting and counts as a crash.
 */
async function releaseLeaseQuietly(options: DrainOptions, lease: Lease, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await releaseLease(options.db, lease);
      return;
    } catch (error) {
      if (attempt >= 4 || !isConnectionError(error)) {
        // It expires on its own after the TTL; the next worker waits at most that long.
        logger.warn({ err: error, sessionId: lease.sessionId }, 'lease release failed');
        return;
      }
      await sleep(backoffMs(attempt, 100, 1000));
    }
  }
}
