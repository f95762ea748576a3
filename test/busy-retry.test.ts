import { describe, expect, it } from 'vitest';
import { BUSY_RETRY_MAX_MS, BUSY_RETRY_MS, busyRetryMs } from '@herald/worker';

describe('a wake-up that found its session busy', () => {
  it('comes back soon the first time, then twice as late each time, up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 50].map(busyRetryMs)).toEqual([BUSY_RETRY_MS, 100, 200, BUSY_RETRY_MAX_MS, BUSY_RETRY_MAX_MS, BUSY_RETRY_MAX_MS, BUSY_RETRY_MAX_MS]);
  });

  it('keeps the first pace when the queue does not count starts', () => {
    expect(busyRetryMs(undefined)).toBe(BUSY_RETRY_MS);
    expect(busyRetryMs(Number.NaN)).toBe(BUSY_RETRY_MS);
    expect(busyRetryMs(0)).toBe(BUSY_RETRY_MS);
  });
});
