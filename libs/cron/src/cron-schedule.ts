import { CronExpressionParser } from 'cron-parser';
import type { CronScheduleKind } from '@herald/db';

/** A schedule as stored: one of a 5-field cron expression in a time zone, an interval, or one time. */
export interface CronSchedule {
  kind: CronScheduleKind;
  /** The schedule as the person wrote it, trimmed. */
  display: string;
  timezone: string;
  cronExpr: string | null;
  intervalMs: number | null;
  runAt: Date | null;
}

/** The schedule text cannot be used; `message` says what is wrong and what is accepted. */
export class ScheduleError extends Error {
  override readonly name = 'ScheduleError';
  /** Which input is wrong: the schedule text or its time zone. */
  readonly field: 'schedule' | 'timezone';
  constructor(message: string, field: 'schedule' | 'timezone' = 'schedule') {
    super(message);
    this.field = field;
  }
}

export const SCHEDULE_HELP =
  "use a 5-field cron expression ('0 9 * * 1-5'), an interval ('every 30m', 'every 2h', 'every 1d'), " + "a delay ('in 2h' or '30m') or an ISO time ('2026-12-24T18:00', read in the job's time zone)";

const MINUTE = 60_000;
const UNIT_MS: Record<string, number> = { s: 1000, m: MINUTE, h: 60 * MINUTE, d: 24 * 60 * MINUTE };
/** A one-shot this far in the past is refused at creation (Hermes' grace, too). */
export const ONE_SHOT_GRACE_MS = 120_000;
const MAX_GRACE_MS = 2 * 60 * MINUTE;

function unitOf(word: string): string | undefined {
  if (/^(s|secs?|seconds?)$/.test(word)) return 's';
  if (/^(m|mins?|minutes?)$/.test(word)) return 'm';
  if (/^(h|hrs?|hours?)$/.test(word)) return 'h';
  if (/^(d|days?)$/.test(word)) return 'd';
  return undefined;
}

function parseDuration(text: string): number | undefined {
  const match = /^(\d+)\s*([a-z]+)$/.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  const unit = unitOf(match[2]);
  if (unit === undefined) return undefined;
  return Number(match[1]) * (UNIT_MS[unit] ?? 0);
}

export function isValidTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC at `instant`, in milliseconds (positive east of Greenwich). */
function zoneOffsetMs(timezone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * A wall-clock time in a zone as an instant. A time inside a spring-forward gap moves forward by
 * the gap (02:30 -> 03:30), the same rule the cron evaluation follows; an ambiguous fall-back time
 * takes its first (daylight) occurrence.
 */
export function zonedTimeToInstant(timezone: string, wall: { year: number; month: number; day: number; hour: number; minute: number; second: number }): Date {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  // The offsets a day before and after: they differ only around a transition.
  const before = zoneOffsetMs(timezone, asUtc - 86_400_000);
  const after = zoneOffsetMs(timezone, asUtc + 86_400_000);
  const valid = [asUtc - before, asUtc - after].filter((candidate) => zoneOffsetMs(timezone, candidate) === asUtc - candidate);
  if (valid.length > 0) return new Date(Math.min(...valid));
  // In the gap: the old offset carries the wall time past the jump.
  return new Date(asUtc - before);
}

const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;
const ISO_ZONED = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

function parseIsoTime(text: string, timezone: string): Date | undefined {
  if (ISO_ZONED.test(text)) {
    const date = new Date(text.replace(' ', 'T'));
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  const local = ISO_LOCAL.exec(text);
  if (!local) return undefined;
  const [, year, month, day, hour, minute, second] = local.map(Number) as number[];
  const wall = { year: year ?? 0, month: month ?? 0, day: day ?? 0, hour: hour ?? 0, minute: minute ?? 0, second: Number.isNaN(second) ? 0 : (second ?? 0) };
  const probe = new Date(Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second));
  if (probe.getUTCMonth() !== wall.month - 1 || probe.getUTCDate() !== wall.day || wall.hour > 23 || wall.minute > 59) return undefined;
  return zonedTimeToInstant(timezone, wall);
}

function cronIterator(expr: string, timezone: string, currentDate: Date) {
  return CronExpressionParser.parse(expr, { tz: timezone, currentDate });
}

/**
 * Parses what a person or the agent wrote. `now` is the scheduler's clock (delays and the one-shot
 * grace are measured from it). Throws ScheduleError with a message that says what is accepted.
 */
export function parseSchedule(input: string, options: { timezone?: string | undefined; now: Date }): CronSchedule {
  const display = input.trim().replace(/\s+/g, ' ');
  const timezone = options.timezone?.trim() || 'UTC';
  if (!isValidTimeZone(timezone)) {
    throw new ScheduleError(`unknown time zone '${timezone}': use an IANA name such as Europe/Berlin or America/New_York`, 'timezone');
  }
  if (display === '') throw new ScheduleError(`the schedule is empty: ${SCHEDULE_HELP}`);
  const lower = display.toLowerCase();
  const base = { display, timezone, cronExpr: null, intervalMs: null, runAt: null };

  const every = /^every\s+(.+)$/.exec(lower);
  if (every?.[1]) {
    const ms = parseDuration(every[1]);
    if (ms === undefined) throw new ScheduleError(`cannot read the interval '${every[1]}': write it like 'every 30m', 'every 2h' or 'every 1d'`);
    if (ms < MINUTE) throw new ScheduleError('an interval must be at least 1 minute');
    return { ...base, kind: 'interval', intervalMs: ms };
  }
  const delay = /^(?:in\s+)?(\d+\s*[a-z]+)$/.exec(lower);
  if (delay?.[1]) {
    const ms = parseDuration(delay[1]);
    if (ms === undefined) throw new ScheduleError(`cannot read the delay '${delay[1]}': write it like 'in 30m', 'in 2h' or 'in 1d'`);
    if (ms < MINUTE) throw new ScheduleError('a delay must be at least 1 minute');
    return { ...base, kind: 'once', runAt: new Date(options.now.getTime() + ms) };
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(display)) {
    const runAt = parseIsoTime(display, timezone);
    if (!runAt) throw new ScheduleError(`cannot read the time '${display}': write it like 2026-12-24T18:00 (in the job's time zone) or 2026-12-24T18:00:00Z`);
    if (runAt.getTime() < options.now.getTime() - ONE_SHOT_GRACE_MS) {
      throw new ScheduleError(`the time ${runAt.toISOString()} is in the past`);
    }
    return { ...base, kind: 'once', runAt };
  }
  const fields = display.split(' ');
  if (fields.length !== 5) {
    throw new ScheduleError(`cannot read the schedule '${display}': ${SCHEDULE_HELP}`);
  }
  try {
    // Parsing alone accepts some impossible dates; asking for the next occurrence proves one exists.
    cronIterator(display, timezone, options.now).next();
  } catch (error) {
    throw new ScheduleError(`invalid cron expression '${display}': ${(error as Error).message}`);
  }
  return { ...base, kind: 'cron', cronExpr: display };
}

/**
 * The first occurrence strictly after `after`. `anchor` is a known occurrence of an interval
 * schedule (its occurrences are anchor + k * interval); cron and one-shot schedules ignore it.
 */
export function nextOccurrence(schedule: CronSchedule, after: Date, anchor: Date | null = null): Date | null {
  if (schedule.kind === 'once') {
    return schedule.runAt !== null && schedule.runAt.getTime() > after.getTime() ? schedule.runAt : null;
  }
  if (schedule.kind === 'interval') {
    const interval = schedule.intervalMs ?? MINUTE;
    const start = (anchor ?? after).getTime();
    if (anchor === null) return new Date(start + interval);
    const steps = Math.max(0, Math.floor((after.getTime() - start) / interval) + 1);
    return new Date(start + steps * interval);
  }
  return cronIterator(schedule.cronExpr ?? '', schedule.timezone, after)
    .next()
    .toDate();
}

/** The first occurrence of a new or rescheduled job, measured from the scheduler's clock `now`. */
export function firstOccurrence(schedule: CronSchedule, now: Date): Date | null {
  if (schedule.kind === 'once') return schedule.runAt;
  return nextOccurrence(schedule, now);
}

/**
 * The next `count` occurrences of a job with this schedule saved at `now`: the first one, then each
 * following as the scheduler computes it (an interval counts from its first occurrence). What the
 * console previews, by the same rules the scheduler fires by.
 */
export function upcomingOccurrences(schedule: CronSchedule, now: Date, count: number): Date[] {
  const first = firstOccurrence(schedule, now);
  const runs: Date[] = [];
  for (let next = first; next !== null && runs.length < count; next = nextOccurrence(schedule, next, schedule.kind === 'interval' ? first : null)) {
    runs.push(next);
  }
  return runs;
}

/** The last occurrence strictly before `before`, at or after `anchor` for intervals. */
export function previousOccurrence(schedule: CronSchedule, before: Date, anchor: Date | null = null): Date | null {
  if (schedule.kind === 'once') {
    return schedule.runAt !== null && schedule.runAt.getTime() < before.getTime() ? schedule.runAt : null;
  }
  if (schedule.kind === 'interval') {
    if (anchor === null || anchor.getTime() >= before.getTime()) return null;
    const interval = schedule.intervalMs ?? MINUTE;
    const steps = Math.floor((before.getTime() - 1 - anchor.getTime()) / interval);
    return new Date(anchor.getTime() + steps * interval);
  }
  return cronIterator(schedule.cronExpr ?? '', schedule.timezone, before)
    .prev()
    .toDate();
}

/**
 * How late an occurrence may still fire as scheduled: half the period, between 2 minutes and 2
 * hours (Hermes' rule). Older occurrences were missed (the scheduler was down) and follow the
 * job's missed-fire policy.
 */
export function misfireGraceMs(schedule: CronSchedule, now: Date): number {
  let period: number;
  if (schedule.kind === 'once') return ONE_SHOT_GRACE_MS;
  if (schedule.kind === 'interval') period = schedule.intervalMs ?? MINUTE;
  else {
    const iterator = cronIterator(schedule.cronExpr ?? '', schedule.timezone, now);
    const first = iterator.next().toDate().getTime();
    period = iterator.next().toDate().getTime() - first;
  }
  return Math.min(MAX_GRACE_MS, Math.max(ONE_SHOT_GRACE_MS, Math.floor(period / 2)));
}

/** Human description of an interval for listings. */
export function describeSchedule(schedule: CronSchedule): string {
  if (schedule.kind === 'cron') return `cron '${schedule.cronExpr}' (${schedule.timezone})`;
  if (schedule.kind === 'interval') return `every ${Math.round((schedule.intervalMs ?? 0) / MINUTE)} min`;
  return `once at ${schedule.runAt?.toISOString() ?? '?'}`;
}
