import { sql } from 'kysely';
import type { Db } from './db.ts';

/** A WAL position as Postgres prints a pg_lsn: two hex numbers, `16/B374D848`. */
const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

/** The position as a number, or undefined when the text is no WAL position (bad input is ignored). */
export function parseLsn(text: string | undefined): bigint | undefined {
  const match = text === undefined ? null : LSN.exec(text.trim());
  if (!match) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** Which server a read went to, for the route's logs and the tests. */
export type ReadSource = 'primary' | 'replica';

export interface RoutedRead {
  db: Db;
  source: ReadSource;
}

/**
 * Where the reads that tolerate lag go (docs/decisions/2026-12-06-read-replica.md): a streaming
 * replica when DATABASE_READ_URL names one, the primary otherwise. Read-your-writes: a reader who
 * wrote carries the primary's WAL position taken after that write (`writePosition`); their reads go
 * to the replica only once it has replayed past that position, else to the primary. A reader who
 * carries no position reads the replica as it is (some seconds behind at worst).
 */
export class ReadRouting {
  readonly #primary: Db;
  readonly #replica: Db | undefined;
  /** The newest replay position seen on the replica: replay only moves forward, so one look can serve many reads. */
  #replayed = -1n;

  constructor(primary: Db, replica?: Db) {
    this.#primary = primary;
    this.#replica = replica;
  }

  /** Whether a replica is configured (without one there is nothing to route, and no position to hand out). */
  get replicated(): boolean {
    return this.#replica !== undefined;
  }

  /** The primary's WAL position now; a reader given it sees everything committed before. Undefined without a replica. */
  async writePosition(): Promise<string | undefined> {
    if (this.#replica === undefined) return undefined;
    const result = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.execute(this.#primary);
    return result.rows[0]?.lsn;
  }

  /**
   * The server for a read by someone whose last write is at `after` (undefined: they wrote nothing
   * that this read must show). A replica that cannot answer its position sends the read to the primary.
   */
  async forRead(after?: string): Promise<RoutedRead> {
    const replica = this.#replica;
    if (replica === undefined) return { db: this.#primary, source: 'primary' };
    const wanted = parseLsn(after);
    if (wanted === undefined || wanted <= this.#replayed) return { db: replica, source: 'replica' };
    try {
      const result = await sql<{ lsn: string | null }>`SELECT pg_last_wal_replay_lsn()::text AS lsn`.execute(replica);
      const replayed = parseLsn(result.rows[0]?.lsn ?? undefined) ?? -1n;
      if (replayed > this.#replayed) this.#replayed = replayed;
    } catch {
      return { db: this.#primary, source: 'primary' };
    }
    return wanted <= this.#replayed ? { db: replica, source: 'replica' } : { db: this.#primary, source: 'primary' };
  }
}
