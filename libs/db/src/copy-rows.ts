import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** The one client a bulk load holds its transaction on. */
export type BulkClient = pg.PoolClient;

/**
 * Writes rows through `COPY ... FROM STDIN` (text format) on the caller's client, inside its
 * transaction: what a bulk load (the Hermes import) uses instead of one INSERT per row. The
 * statement names the table and its columns, so it is written by the table's owning lib.
 */
export async function copyRows(client: BulkClient, statement: string, rows: Iterable<(string | null)[]>): Promise<void> {
  await pipeline(Readable.from(copyLines(rows)), client.query(copyFrom(statement)));
}

/** COPY's text format, many rows per chunk: one write per row would dominate a large load. */
function* copyLines(rows: Iterable<(string | null)[]>): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += row.map(copyField).join('\t') + '\n';
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}
