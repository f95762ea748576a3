import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDatabase = BetterSqlite3.Database;

/** better-sqlite3 is missing or its native build does not load: the search benchmark says so and what to do. */
export class SqliteMissingError extends Error {
  override readonly name = 'SqliteMissingError';
}

/**
 * better-sqlite3 (the FTS5 side of the search benchmark) has a native build, so it is not in the
 * default install: bench/run.ts installs it into bench/node_modules on the first search run, and it
 * is imported only when the benchmark runs; nothing else needs it.
 */
export async function loadSqlite(): Promise<typeof BetterSqlite3> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0] ?? '';
    throw new SqliteMissingError(
      `better-sqlite3 could not be loaded (${reason}). The search benchmark measures SQLite FTS5 beside Herald; ` +
        'install it with `npm install --prefix bench better-sqlite3@12.9.0` (needs make, g++ and python3 to build it).',
    );
  }
}
