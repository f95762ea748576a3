import { describe, expect, it } from 'vitest';
import { parseSchedule } from '@herald/cron';
import { planOccurrences } from '@herald/cron';

const NOW = new Date('2026-11-30T12:00:00Z');

describe('missed occurrences', () => {
  const hourly = parseSchedule('every 1h', { now: NOW });
  const due = new Date('2026-11-30T06:00:00Z');

  it('skip: the missed occurrences are recorded, nothing runs, the next run is after now', () => {
    const plan = planOccurrences(hourly, due, new Date('2026-11-30T10:45:00Z'), 'skip');
    expect(plan.onTime).toEqual([]);
    expect(plan.missed).toEqual({ last: new Date('2026-11-30T10:00:00Z'), count: 5 });
    expect(plan.runMissed).toBe(false);
    expect(plan.next?.toISOString()).toBe('2026-11-30T11:00:00.000Z');
  });

  it('run_once: one run makes up for the whole gap', () => {
    const plan = planOccurrences(hourly, due, new Date('2026-11-30T10:45:00Z'), 'run_once');
    expect(plan.runMissed).toBe(true);
    expect(plan.next?.toISOString()).toBe('2026-11-30T11:00:00.000Z');
  });

  it('an occurrence within the grace window fires as scheduled, whatever the policy', () => {
    const plan = planOccurrences(hourly, new Date('2026-11-30T11:00:00Z'), new Date('2026-11-30T11:20:00Z'), 'skip');
    expect(plan.onTime).toEqual([new Date('2026-11-30T11:00:00Z')]);
    expect(plan.missed).toBeNull();
  });
});
