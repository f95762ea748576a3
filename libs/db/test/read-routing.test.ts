import { describe, expect, it } from 'vitest';
import type { Db } from '@herald/db';
import { parseLsn, ReadRouting } from '@herald/db';

describe('read routing (DATABASE_READ_URL)', () => {
  it('reads WAL positions as Postgres prints them, and nothing else', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn(' 1/0 ')).toBe(1n << 32n);
    // Ordered as positions, not as text.
    expect(parseLsn('0/A0')! < parseLsn('0/9F0')!).toBe(true);
    for (const bad of [undefined, '', '16', '16/', '/1', '1/2/3', 'G/1', '123456789/1', "0/0'; SELECT 1", '0/0\u0000']) {
      expect(parseLsn(bad), String(bad)).toBeUndefined();
    }
  });

  it('without a replica, every read goes to the primary and no position is handed out', async () => {
    const primary = {} as Db;
    const reads = new ReadRouting(primary);
    expect(reads.replicated).toBe(false);
    expect(await reads.forRead('0/1')).toEqual({ db: primary, source: 'primary' });
    expect(await reads.forRead()).toEqual({ db: primary, source: 'primary' });
    expect(await reads.writePosition()).toBeUndefined();
  });

  it('with a replica, a read without a position (or with a garbled one) goes to it without asking anything', async () => {
    const primary = {} as Db;
    const replica = {} as Db;
    const reads = new ReadRouting(primary, replica);
    expect(await reads.forRead()).toEqual({ db: replica, source: 'replica' });
    expect(await reads.forRead('not a position')).toEqual({ db: replica, source: 'replica' });
  });
});
