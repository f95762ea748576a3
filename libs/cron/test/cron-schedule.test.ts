import { describe, expect, it } from 'vitest';
import { nextOccurrence, parseDeliver, parseSchedule, ScheduleError, zonedTimeToInstant } from '@herald/cron';

const NOW = new Date('2026-11-30T12:00:00Z');

function daily(timezone: string, from: string, count: number): string[] {
  const schedule = parseSchedule('30 2 * * *', { timezone, now: new Date(from) });
  const out: string[] = [];
  let t = new Date(from);
  for (let i = 0; i < count; i++) {
    const next = nextOccurrence(schedule, t);
    if (!next) break;
    out.push(next.toISOString());
    t = next;
  }
  return out;
}

describe('schedules across daylight-saving changes', () => {
  it('Europe/Berlin 02:30 daily: the missing 02:30 on spring-forward day fires once at 03:30 CEST', () => {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist that night.
    expect(daily('Europe/Berlin', '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 03:30 CEST: moved forward by the gap, once
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('Europe/Berlin 02:30 daily: the doubled 02:30 on fall-back day fires once, at the first one', () => {
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET, so 02:30 happens twice.
    expect(daily('Europe/Berlin', '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST (first); the 02:30 CET an hour later does not fire
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
  });

  it('America/New_York 02:30 daily across both changes', () => {
    expect(daily('America/New_York', '2026-03-07T12:00:00Z', 2)).toEqual([
      '2026-03-08T07:30:00.000Z', // 03:30 EDT: 02:30 does not exist on 2026-03-08
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
    expect(daily('America/New_York', '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T07:30:00.000Z', // 02:30 EST (only 01:00-02:00 repeats in New York)
      '2026-11-02T07:30:00.000Z',
    ]);
  });

  it('an hourly job fires every real hour through the fall-back night: the repeated hour twice, nothing skipped', () => {
    const schedule = parseSchedule('0 * * * *', { timezone: 'Europe/Berlin', now: NOW });
    const fired: string[] = [];
    let t = new Date('2026-10-24T23:30:00Z');
    for (let i = 0; i < 4; i++) {
      t = nextOccurrence(schedule, t) ?? t;
      fired.push(t.toISOString());
    }
    expect(fired).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z', '2026-10-25T03:00:00.000Z']);
  });

  it('a naive ISO time is read in the job zone, including inside the gap', () => {
    expect(zonedTimeToInstant('Europe/Berlin', { year: 2026, month: 7, day: 1, hour: 9, minute: 0, second: 0 }).toISOString()).toBe('2026-07-01T07:00:00.000Z');
    expect(zonedTimeToInstant('Europe/Berlin', { year: 2026, month: 3, day: 29, hour: 10, minute: 0, second: 0 }).toISOString()).toBe('2026-03-29T08:00:00.000Z');
    expect(zonedTimeToInstant('Europe/Berlin', { year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0 }).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    const once = parseSchedule('2026-12-24T18:00', { timezone: 'America/New_York', now: NOW });
    expect(once.runAt?.toISOString()).toBe('2026-12-24T23:00:00.000Z');
  });
});

describe('schedule parsing', () => {
  it('reads intervals, delays, ISO times and cron expressions', () => {
    expect(parseSchedule('every 30m', { now: NOW })).toMatchObject({ kind: 'interval', intervalMs: 30 * 60_000 });
    expect(parseSchedule('Every 2 hours', { now: NOW })).toMatchObject({ kind: 'interval', intervalMs: 2 * 3_600_000 });
    expect(parseSchedule('in 2h', { now: NOW }).runAt?.toISOString()).toBe('2026-11-30T14:00:00.000Z');
    expect(parseSchedule('30m', { now: NOW }).runAt?.toISOString()).toBe('2026-11-30T12:30:00.000Z');
    expect(parseSchedule('2026-12-01T08:00:00Z', { now: NOW })).toMatchObject({ kind: 'once' });
    expect(parseSchedule('0 9 * * 1-5', { timezone: 'Europe/Berlin', now: NOW })).toMatchObject({
      kind: 'cron',
      cronExpr: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
    });
  });

  it.each([
    ['every 30s', /at least 1 minute/],
    ['every often', /cannot read the interval/],
    ['61 * * * *', /invalid cron expression/],
    ['* * * *', /cannot read the schedule/],
    ['0 0 * * * *', /cannot read the schedule/],
    ['0 0 31 2 *', /invalid cron expression/],
    ['2026-11-29T10:00:00Z', /in the past/],
    ['2026-02-30T10:00', /cannot read the time/],
    ['', /empty/],
  ])('refuses %j with a clear message', (input, message) => {
    expect(() => parseSchedule(input, { now: NOW })).toThrow(message);
    expect(() => parseSchedule(input, { now: NOW })).toThrow(ScheduleError);
  });

  it('refuses an unknown time zone', () => {
    expect(() => parseSchedule('0 9 * * *', { timezone: 'Mars/Olympus', now: NOW })).toThrow(/unknown time zone 'Mars\/Olympus'/);
  });
});

describe('delivery targets', () => {
  const telegramOrigin = { platform: 'telegram', chatType: 'group', chatId: '-100', threadId: '7' };

  it("reads Hermes' deliver strings and defaults to the origin chat", () => {
    expect(parseDeliver(undefined, telegramOrigin)).toEqual([{ platform: 'telegram', chatId: '-100', threadId: '7' }]);
    expect(parseDeliver(undefined, { platform: 'api', chatType: 'dm', chatId: 'x' })).toEqual([]);
    expect(parseDeliver('origin, discord:55:66, webhook:https://example.com/h, local', telegramOrigin)).toEqual([
      { platform: 'telegram', chatId: '-100', threadId: '7' },
      { platform: 'discord', chatId: '55', threadId: '66' },
      { platform: 'webhook', url: 'https://example.com/h' },
    ]);
    expect(parseDeliver(['telegram:-100:7', 'origin'], telegramOrigin)).toHaveLength(1);
    // A chat on a named bot (a second Slack app) is reported to through that bot.
    const slackOrigin = { platform: 'slack', account: 'second', chatType: 'group', chatId: 'C1', threadId: '1800000000.000100' };
    expect(parseDeliver(undefined, slackOrigin)).toEqual([{ platform: 'slack', chatId: 'C1', threadId: '1800000000.000100', account: 'second' }]);
    expect(parseDeliver('slack', slackOrigin)).toEqual([{ platform: 'slack', chatId: 'C1', threadId: '1800000000.000100', account: 'second' }]);
  });

  it('refuses what it cannot deliver to', () => {
    expect(() => parseDeliver('origin', { platform: 'api', chatType: 'dm', chatId: 'x' })).toThrow(/cannot receive reports/);
    expect(() => parseDeliver('matrix:1', telegramOrigin)).toThrow(/unknown delivery target 'matrix:1'/);
    expect(parseDeliver('slack:C1:1800000000.000100,slack@ops:C2', telegramOrigin)).toEqual([
      { platform: 'slack', chatId: 'C1', threadId: '1800000000.000100' },
      { platform: 'slack', chatId: 'C2', account: 'ops' },
    ]);
    expect(() => parseDeliver('slack@Bad!:C1', telegramOrigin)).toThrow(/account name/);
    expect(() => parseDeliver('webhook:ftp://x', null)).toThrow(/http or https/);
  });

  it('reads e-mail targets: one per address, several after one email: prefix, the domain in lower case', () => {
    expect(parseDeliver('email:Ops@Example.COM, b.c+tag@x.example.org, telegram:5, email:d@e.io', telegramOrigin)).toEqual([
      { platform: 'email', chatId: 'Ops@example.com' },
      { platform: 'email', chatId: 'b.c+tag@x.example.org' },
      { platform: 'telegram', chatId: '5' },
      { platform: 'email', chatId: 'd@e.io' },
    ]);
    expect(parseDeliver(['email:a@example.com', 'a@example.com'], null)).toHaveLength(1);
  });

  it.each([
    ['email:', /not a mail address/],
    ['email:nobody', /not a mail address/],
    ['email:a@localhost', /not a domain name/],
    ['email:a..b@example.com', /part before @/],
    ['email:a@example.com\r\nBcc: evil@example.net', /part before @/],
    ['email:a@exa_mple.com', /not a domain name/],
    ['email:"a b"@example.com', /part before @/],
    ['email:a@example.com\u0000', /not a domain name/],
    ['telegram:5, x@example.com', /unknown delivery target 'x@example.com'/],
  ])('refuses the e-mail target %j', (spec, message) => {
    expect(() => parseDeliver(spec, null)).toThrow(message);
  });
});
