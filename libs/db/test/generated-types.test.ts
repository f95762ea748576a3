import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ALLOWED_VALUES } from '@herald/db';
import { runCodegen } from '../../../scripts/db-types.ts';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import type { TestDatabase } from '../../../test/support/test-database.ts';

describe('the table types', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('are what kysely-codegen makes of a freshly migrated database (run `npm run db:types` after a migration)', () => {
    expect(() => runCodegen(database.url, true)).not.toThrow();
  });

  it('allow exactly the values each CHECK constraint allows', async () => {
    const rows = await sql<{ table: string; definition: string }>`
      SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS definition
        FROM pg_constraint WHERE contype = 'c' AND connamespace = 'public'::regnamespace`.execute(database.db);
    const inDatabase: Record<string, string[]> = {};
    for (const row of rows.rows) {
      // CHECK ((status = ANY (ARRAY['pending'::text, ...]))) names one column and its value list.
      const match = /^CHECK \(\(\(?(\w+) = ANY \(ARRAY\[(.*)\]\)\)\)?\)$/.exec(row.definition);
      if (!match) continue;
      inDatabase[`${row.table}.${match[1]}`] = [...match[2]!.matchAll(/'([^']*)'::text/g)].map((m) => m[1]!);
    }
    expect(inDatabase).toEqual(Object.fromEntries(Object.entries(ALLOWED_VALUES).map(([column, values]) => [column, [...values]])));
  });
});
