import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase } from './test-database.ts';
import type { TestDatabase } from './test-database.ts';

/**
 * A fresh database for the tests of the calling file or describe block: created before the first
 * test, dropped after the last. Its fields are filled in by the time a test runs.
 */
export function useTestDatabase(): TestDatabase {
  const database = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(database, await createTestDatabase());
  });
  afterAll(async () => {
    await database.drop();
  });
  return database;
}
