import { afterEach, describe, expect, it } from 'vitest';
import { ProfileCache } from '@herald/db';
import { addPerson, personKeyOf } from '@herald/people';
import { budgetsOn, checkBudgets, removeBudget, setBudget } from '@herald/limits';
import { mayCarryFiles, describeAttachment, workspacePathOf } from '@herald/attachments';
import { useTestDatabase } from './support/use-test-database.ts';
import { countQueries } from './support/db-probes.ts';
import { waitFor } from './support/wait.ts';

// The round trips a turn no longer pays (docs/decisions/2026-12-06-turn-round-trips.md): a sender's
// person key and whether any budget is on are kept per process, and dropped by the notices of
// migrations/0088_shared_cache_notices.sql the moment another connection changes them.

const NO_DEFAULTS = { personDay: 0, personMonth: 0, profileDay: 0, profileMonth: 0 };

describe('values kept beside the profile cache', () => {
  const database = useTestDatabase();
  const caches: ProfileCache[] = [];
  afterEach(async () => {
    await Promise.all(caches.splice(0).map((cache) => cache.stop()));
    await database.db.deleteFrom('budgets').execute();
  });
  const openCache = async () => {
    const cache = new ProfileCache({ db: database.db, url: database.url });
    caches.push(cache);
    await cache.start();
    expect(cache.listening).toBe(true);
    return cache;
  };

  it("reads a sender's person key once, and sees a link another connection commits", async () => {
    const cache = await openCache();
    const counted = countQueries(database.db, 'person_identities');
    const identity = `telegram:${Date.now()}`;
    expect(await personKeyOf(counted.db, identity, cache)).toBe(identity);
    expect(await personKeyOf(counted.db, identity, cache)).toBe(identity);
    expect(counted.count()).toBe(1);
    const person = await addPerson(database.db, { displayName: 'Ada', identities: [`api:ada-${Date.now()}`, identity] }, 'test');
    await waitFor(async () => (await personKeyOf(counted.db, identity, cache)) === person.key, { what: 'the link seen through the cache' });
    expect(person.key).not.toBe(identity);
    const reads = counted.count();
    expect(await personKeyOf(counted.db, identity, cache)).toBe(person.key);
    expect(counted.count()).toBe(reads);
  });

  it('reads no budget before a call while none is on, and the first one set counts at once', async () => {
    const cache = await openCache();
    const counted = countQueries(database.db, 'herald_budget_status');
    const context = { userId: 'api:bea', profileId: 'main', sessionId: '00000000-0000-4000-8000-000000000001', turnId: '00000000-0000-4000-8000-000000000002', budgets: NO_DEFAULTS, profiles: cache };
    expect(await budgetsOn(database.db, NO_DEFAULTS, cache)).toBe(false);
    expect(await checkBudgets(counted.db, context)).toBeUndefined();
    expect(counted.count()).toBe(0);
    await setBudget(database.db, 'person', 'api:bea', 0.000001, null);
    await waitFor(async () => budgetsOn(database.db, NO_DEFAULTS, cache), { what: 'the budget seen through the cache' });
    await database.db
      .insertInto('usage_costs')
      .values({ day: new Date().toISOString().slice(0, 10), user_id: 'api:bea', profile_id: 'main', cost_usd: '1' })
      .execute();
    expect((await checkBudgets(counted.db, context))?.budget).toEqual({ scope: 'person', period: 'day' });
    expect(counted.count()).toBe(1);
    await removeBudget(database.db, 'person', 'api:bea');
    await waitFor(async () => !(await budgetsOn(database.db, NO_DEFAULTS, cache)), { what: 'the removal seen through the cache' });
    await database.db.deleteFrom('usage_costs').where('user_id', '=', 'api:bea').execute();
  });

  it('counts a default budget as on without reading the table', async () => {
    const cache = await openCache();
    const counted = countQueries(database.db, 'budgets');
    expect(await budgetsOn(counted.db, { ...NO_DEFAULTS, profileMonth: 5 }, cache)).toBe(true);
    expect(counted.count()).toBe(0);
  });

  it('reads budgets every time without a cache (a process with no listener)', async () => {
    const counted = countQueries(database.db, 'herald_budget_status');
    const context = { userId: 'api:cy', profileId: 'main', sessionId: '00000000-0000-4000-8000-000000000001', turnId: '00000000-0000-4000-8000-000000000002', budgets: NO_DEFAULTS };
    await checkBudgets(counted.db, context);
    await checkBudgets(counted.db, context);
    expect(counted.count()).toBe(2);
  });
});

describe('which messages may carry files', () => {
  it('is every message an attachment was described in, and not a plain one', () => {
    const attachment = { sha256: 'a'.repeat(64), name: 'shot.png', path: workspacePathOf('a'.repeat(64), 'shot.png'), mime: 'image/png', kind: 'image' as const, size: 2048 };
    expect(mayCarryFiles(`look at this\n${describeAttachment(attachment)}`)).toBe(true);
    expect(mayCarryFiles('what is the weather')).toBe(false);
  });
});
