import { enqueueWake } from './run-queue.ts';
import type { RunQueue } from './run-queue.ts';
import type { NoticeBus } from './notice-bus.ts';
import { publishSessionControl } from './session-control.ts';
import type { ControlAction } from './session-control.ts';

export interface AcceptedNotice {
  sessionId: string;
  needsWake: boolean;
  wakeGeneration: string;
  duplicate: boolean;
  control?: ControlAction;
  /** Other sessions the command made runnable (a /new that withdrew the ended session's approvals). */
  alsoWake?: readonly { sessionId: string; wakeGeneration: string }[];
}

/**
 * What every ingress path does once a message is committed: wake the session, and tell a running
 * turn about /stop or an interrupt. The queue's store being down loses nothing here: the reconciler finds the
 * committed event, so failures are only logged.
 */
export async function announceAccepted(
  deps: { queue: RunQueue; notices: NoticeBus; queuePrefix: string; logger: { warn(object: object, message: string): void } },
  accepted: AcceptedNotice,
): Promise<void> {
  const { sessionId } = accepted;
  if (accepted.needsWake) {
    await enqueueWake(deps.queue, sessionId, accepted.wakeGeneration).catch((error: unknown) => deps.logger.warn({ err: error, sessionId }, 'wake-up enqueue failed; the reconciler will retry'));
  }
  for (const other of accepted.alsoWake ?? []) {
    await enqueueWake(deps.queue, other.sessionId, other.wakeGeneration).catch((error: unknown) =>
      deps.logger.warn({ err: error, sessionId: other.sessionId }, 'wake-up enqueue failed; the reconciler will retry'),
    );
  }
  if (accepted.control !== undefined && !accepted.duplicate) {
    await publishSessionControl(deps.notices, deps.queuePrefix, sessionId, accepted.control).catch((error: unknown) => deps.logger.warn({ err: error, sessionId }, 'session control notice failed'));
  }
}
