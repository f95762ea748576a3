import type pg from 'pg';

/**
 * A large import into a small table loads faster with the table's secondary indexes built once
 * afterwards than kept up row by row: the search indexes are GIN (trigrams and words per message),
 * whose row-by-row upkeep cost several times their build. Only the indexes that no constraint
 * needs are set aside (the primary key and unique (session_id, seq) stay, so a duplicate still
 * fails), and their definitions come from the catalogue, so nothing here repeats a migration.
 */
export interface SetAsideIndexes {
  /** The `CREATE INDEX` statements to run once the rows are in. */
  definitions: string[];
}

/** Past this many rows per row already stored, rebuilding beats upkeep (measured: docs/decisions/2026-12-02-import-speed.md). */
const REBUILD_RATIO = 1;

/**
 * Whether to set the indexes aside: when the import brings more rows than the table holds. Then
 * the rebuild costs at most about what the rows themselves cost; a small import into a large table
 * keeps the indexes, because rebuilding them would read every row already there.
 */
export async function shouldRebuild(client: pg.PoolClient, table: string, incoming: number): Promise<boolean> {
  if (incoming === 0) return false;
  const { rows } = await client.query<{ estimate: number }>('SELECT reltuples AS estimate FROM pg_class WHERE oid = $1::regclass', [table]);
  let existing = Number(rows[0]?.estimate ?? -1);
  // -1: never vacuumed or analysed (a young table); count it, which is cheap while it is young.
  if (existing < 0) existing = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${client.escapeIdentifier(table)}`)).rows[0]?.n ?? 0);
  return incoming > existing * REBUILD_RATIO;
}

/**
 * Drops the table's indexes that back no constraint, inside the caller's transaction (which then
 * holds the table's exclusive lock until it commits: writers wait for the import), and returns
 * how to build them again.
 */
export async function setIndexesAside(client: pg.PoolClient, table: string): Promise<SetAsideIndexes> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i
      WHERE i.indrelid = $1::regclass AND NOT i.indisunique AND NOT i.indisprimary
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
      ORDER BY 1`,
    [table],
  );
  for (const row of rows) await client.query(`DROP INDEX ${row.name}`); // regclass text: already quoted as needed
  return { definitions: rows.map((row) => row.definition) };
}

/** Builds the set-aside indexes, with the memory a one-off build deserves (a GIN build spills to disk past it). */
export async function buildIndexes(client: pg.PoolClient, aside: SetAsideIndexes): Promise<void> {
  if (aside.definitions.length === 0) return;
  await client.query(`SET LOCAL maintenance_work_mem = '512MB'`);
  for (const definition of aside.definitions) await client.query(definition);
}
