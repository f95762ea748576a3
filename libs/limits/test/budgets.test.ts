import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { acceptInbound } from '@herald/inbox';
import { budgetPassed, budgetStates, LimitExceededError, setBudget, warnBudgets } from '@herald/limits';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

// The money budgets (docs/decisions/2026-12-06-usage-and-budgets.md): what herald_budget_status
// counts, which spent budget refuses, and the one warning at 80% even when many workers look at once.
describe('money budgets', () => {
  const database = useTestDatabase();
  const spend = (userId: string, profileId: string, dollars: number, daysAgo = 0) =>
    sql`INSERT INTO usage_costs (day, user_id, profile_id, cost_usd)
        VALUES ((now() AT TIME ZONE 'UTC')::date - ${daysAgo}::integer, ${userId}, ${profileId}, ${dollars})
        ON CONFLICT (day, user_id, profile_id) DO UPDATE SET cost_usd = usage_costs.cost_usd + EXCLUDED.cost_usd`.execute(database.db);

  it('counts a person over every profile and a profile over every person; its own row replaces the default, 0 turns it off', async () => {
    await spend('api:kim', 'main', 0.5);
    await spend('api:kim', 'other', 0.25);
    await spend('api:lee', 'main', 1);
    const defaults = { personDay: 2, personMonth: 0, profileDay: 0, profileMonth: 10 };
    expect(await budgetStates(database.db, 'api:kim', 'main', defaults)).toMatchObject([
      { scope: 'person', subject: 'api:kim', period: 'day', budgetUsd: 2, spentUsd: 0.75 },
      { scope: 'profile', subject: 'main', period: 'month', budgetUsd: 10, spentUsd: 1.5 },
    ]);
    await setBudget(database.db, 'person', 'api:kim', 0, 5);
    expect(await budgetStates(database.db, 'api:kim', 'main', defaults)).toMatchObject([
      { scope: 'person', period: 'month', budgetUsd: 5, spentUsd: 0.75 },
      { scope: 'profile', period: 'month' },
    ]);
  });

  it('refuses by the spent budget that renews last: the month before the day', async () => {
    await spend('api:max', 'main', 3);
    const refused = await budgetPassed(database.db, 'api:max', 'main', { personDay: 1, personMonth: 2, profileDay: 0, profileMonth: 0 });
    expect(refused).toMatchObject({ limit: 'budget', budget: { scope: 'person', period: 'month' } });
    expect(refused?.message).toMatch(/^Not taken: You have spent this month's model budget for one person/);
    expect(await budgetPassed(database.db, 'api:max', 'main', { personDay: 5, personMonth: 0, profileDay: 0, profileMonth: 0 })).toBeUndefined();
  });

  it('warns once per budget and period when eight workers check at the same moment, with one chat message', async () => {
    const accepted = await acceptInbound(database.db, { profileId: 'main', platform: 'telegram', chatType: 'dm', chatId: '9100', userId: 'telegram:9100', text: 'hi' });
    await spend('telegram:9100', 'main', 0.85);
    const context = {
      userId: 'telegram:9100',
      profileId: 'main',
      sessionId: accepted.sessionId,
      turnId: crypto.randomUUID(),
      budgets: { personDay: 1, personMonth: 0, profileDay: 0, profileMonth: 0 },
    };
    const lines = (await Promise.all(Array.from({ length: 8 }, () => warnBudgets(database.db, context)))).flat();
    expect(lines).toEqual(['Heads-up: your model budget for today is 85% spent ($0.85 of $1.00).']);
    const outbox = await database.db.selectFrom('outbox').select(['text', 'source']).where('session_id', '=', accepted.sessionId).execute();
    expect(outbox).toEqual([{ text: lines[0], source: 'budget' }]);
    // Spending more the same day warns no more.
    await spend('telegram:9100', 'main', 0.1);
    expect(await warnBudgets(database.db, { ...context, turnId: crypto.randomUUID() })).toEqual([]);
  });

  it('refuses a message past a budget row when the edge passes budgets, and nothing without them (a scheduled run firing)', async () => {
    await setBudget(database.db, 'person', 'api:nell', 0.01, null);
    await spend('api:nell', 'main', 0.02);
    const message = { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'nell', userId: 'api:nell', text: 'hello' };
    const zeros = { personDay: 0, personMonth: 0, profileDay: 0, profileMonth: 0 };
    const refused = await acceptInbound(database.db, message, { backlogLimit: 50, budgets: zeros }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LimitExceededError);
    expect(refused).toMatchObject({ limit: 'budget', budget: { scope: 'person', period: 'day' } });
    expect((await acceptInbound(database.db, message, { backlogLimit: 50 })).eventId).not.toBe('');
  });
});
