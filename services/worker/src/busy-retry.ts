/**
 * When a wake-up finds its session's lease held, it is handed back for later. Usually the holder is
 * a live worker in the middle of a turn, and it takes the new message itself when its turn ends
 * (herald_finish_turn_next reads the inbox before letting go), so each early retry is a claim and two
 * queue scripts spent for nothing: behind a 200 ms turn a flat 50 ms retry makes up to four of them
 * (arithmetic; the turns bench's clients never queue two messages in one session, so it does not
 * show there). The retry is still needed for the holder that
 * let go a moment after this claim looked, and for one that died (its lease runs out): the first
 * comes back in 50 ms, later ones wait twice as long each time, never more than BUSY_RETRY_MAX_MS,
 * so a crashed holder's session is taken within that of its lease running out.
 */
export const BUSY_RETRY_MS = 50;
export const BUSY_RETRY_MAX_MS = 400;

/** The wait before the `started`-th try of a wake-up (BullMQ's attemptsStarted: 1 on its first). */
export function busyRetryMs(started: number | undefined): number {
  // A queue that does not count starts retries at the first pace.
  const retries = started === undefined || !Number.isFinite(started) ? 0 : Math.max(0, Math.min(started - 1, 10));
  return Math.min(BUSY_RETRY_MAX_MS, BUSY_RETRY_MS * 2 ** retries);
}
