import { beforeAll, describe, expect, it } from 'vitest';
import { readMemory, writeMemory } from '@herald/knowledge';
import type { MemoryOperation, MemoryScope } from '@herald/knowledge';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

describe('memory stores', () => {
  const database = useTestDatabase();
  const write = (scope: MemoryScope, operations: MemoryOperation[]) => database.db.transaction().execute((trx) => writeMemory(trx, scope, operations));
  beforeAll(async () => {
    await database.db.updateTable('profiles').set({ memory_char_limit: 120, user_char_limit: 60 }).where('id', '=', 'main').execute();
  });

  it('adds, replaces and removes by a unique piece of one entry', async () => {
    const scope: MemoryScope = { profileId: 'main', store: 'memory', userId: '' };
    expect((await write(scope, [{ action: 'add', content: 'Deploys happen on Tuesdays' }])).ok).toBe(true);
    expect((await write(scope, [{ action: 'add', content: 'CI runs on main only' }])).ok).toBe(true);
    const replaced = await write(scope, [{ action: 'replace', old_text: 'Tuesdays', content: 'Deploys happen on Thursdays' }]);
    expect(replaced.ok && replaced.state.entries.map((e) => e.content)).toEqual(['Deploys happen on Thursdays', 'CI runs on main only']);
    const ambiguous = await write(scope, [{ action: 'remove', old_text: 'on' }]);
    expect(ambiguous.ok).toBe(false);
    if (!ambiguous.ok) expect(ambiguous.error).toMatch(/matches 2 entries.*"Deploys happen on Thursdays".*"CI runs on main only"/);
    const missing = await write(scope, [{ action: 'remove', old_text: 'nothing like this' }]);
    expect(!missing.ok && missing.error).toMatch(/no entry contains/);
    expect((await write(scope, [{ action: 'remove', old_text: 'CI runs' }])).ok).toBe(true);
    expect((await readMemory(database.db, scope)).entries.map((e) => e.content)).toEqual(['Deploys happen on Thursdays']);
  });

  it('applies a batch all or nothing, checking the limit on the final state', async () => {
    const scope: MemoryScope = { profileId: 'main', store: 'user', userId: 'ada' };
    expect((await write(scope, [{ action: 'add', content: 'x'.repeat(50) }])).ok).toBe(true);
    const over = await write(scope, [{ action: 'add', content: 'y'.repeat(20) }]);
    expect(over.ok).toBe(false);
    if (!over.ok) {
      expect(over.error).toMatch(/would use 70 of 60 characters/);
      expect(over.state.entries).toHaveLength(1);
    }
    // Removing first makes room: only the final state counts.
    const swap = await write(scope, [
      { action: 'remove', old_text: 'xxxx' },
      { action: 'add', content: 'Name is Ada' },
      { action: 'add', content: 'Prefers tea' },
    ]);
    expect(swap.ok && swap.state.entries.map((e) => e.content)).toEqual(['Name is Ada', 'Prefers tea']);
    const failing = await write(scope, [
      { action: 'add', content: 'Lives in Oslo' },
      { action: 'replace', old_text: 'no such text', content: 'z' },
    ]);
    expect(!failing.ok && failing.error).toMatch(/operation 2 \(replace\)/);
    expect((await readMemory(database.db, scope)).entries.map((e) => e.content)).toEqual(['Name is Ada', 'Prefers tea']);
    // Another person's store is separate.
    expect((await readMemory(database.db, { ...scope, userId: 'bob' })).entries).toEqual([]);
  });

  it('loses no write when many writers hit the same store at once', async () => {
    const scope: MemoryScope = { profileId: 'main', store: 'user', userId: 'busy' };
    await database.db.updateTable('profiles').set({ user_char_limit: 10_000 }).where('id', '=', 'main').execute();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => write(scope, [{ action: 'add', content: `fact number ${i}` }])));
    expect(results.every((r) => r.ok)).toBe(true);
    const entries = (await readMemory(database.db, scope)).entries.map((e) => e.content).sort();
    expect(entries).toEqual(Array.from({ length: 12 }, (_, i) => `fact number ${i}`).sort());
  });
});
