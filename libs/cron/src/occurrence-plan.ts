import { misfireGraceMs, nextOccurrence, previousOccurrence } from './cron-schedule.ts';
import type { CronSchedule } from './cron-schedule.ts';
import type { CronMissedPolicy } from '@herald/db';

/** What one tick does with a due job. */
export interface OccurrencePlan {
  /** Occurrences still within the grace window: each fires. */
  onTime: Date[];
  /** The latest occurrence older than the grace window (the scheduler was down), if any. */
  missed: { last: Date; count: number } | null;
  /** True when the missed occurrences are to be made up by one run (policy run_once, nothing on time). */
  runMissed: boolean;
  /** The job's next occurrence after now; null when a one-shot is used up. */
  next: Date | null;
}

// Bounds the work a tick does for one job whatever the clock did (a jump of years, a tiny period).
const MAX_ON_TIME = 50;
const MAX_COUNTED = 1000;

/**
 * Splits the occurrences from the job's stored next run up to now into those that fire as
 * scheduled and those that were missed. `due` is the stored next_run_at, itself an occurrence.
 */
export function planOccurrences(schedule: CronSchedule, due: Date, now: Date, policy: CronMissedPolicy): OccurrencePlan {
  const cutoff = new Date(now.getTime() - misfireGraceMs(schedule, now));
  const anchor = schedule.kind === 'interval' ? due : null;
  let cursor: Date | null = due;
  let missed: OccurrencePlan['missed'] = null;
  if (due.getTime() < cutoff.getTime()) {
    const last = schedule.kind === 'once' ? due : (previousOccurrence(schedule, cutoff, anchor) ?? due);
    let count = 1;
    for (let t: Date | null = due; t !== null && t.getTime() < last.getTime() && count < MAX_COUNTED; t = nextOccurrence(schedule, t, anchor)) {
      count++;
    }
    missed = { last, count };
    cursor = nextOccurrence(schedule, last, anchor);
  }
  const onTime: Date[] = [];
  while (cursor !== null && cursor.getTime() <= now.getTime() && onTime.length < MAX_ON_TIME) {
    onTime.push(cursor);
    cursor = nextOccurrence(schedule, cursor, anchor);
  }
  // Past the on-time cap (only a clock jump gets here), skip ahead instead of firing a backlog.
  if (cursor !== null && cursor.getTime() <= now.getTime()) cursor = nextOccurrence(schedule, now, anchor);
  return { onTime, missed, runMissed: missed !== null && policy === 'run_once' && onTime.length === 0, next: cursor };
}
