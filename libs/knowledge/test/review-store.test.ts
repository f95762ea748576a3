import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { claimReview, finishReview, recordTurnCompletion } from '@herald/knowledge';
import type { TurnCompletedEvent } from '@herald/knowledge';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

describe('review triggers and claims', () => {
  const database = useTestDatabase();
  let sessionId: string;
  const event = (overrides: Partial<TurnCompletedEvent> = {}): TurnCompletedEvent => ({
    turnId: randomUUID(),
    sessionId,
    profileId: 'main',
    userId: 'ada',
    userTurns: 1,
    iterations: 1,
    memoryUsed: false,
    skillUsed: false,
    interrupted: false,
    errored: false,
    scheduled: false,
    toolDefinitions: '[]',
    ...overrides,
  });
  beforeAll(async () => {
    sessionId = randomUUID();
    await database.db
      .insertInto('sessions')
      .values({ id: sessionId, profile_id: 'main', session_key: 'k', platform: 'api', chat_type: 'dm', chat_id: 'c', thread_id: null, origin_user_id: 'ada', system_prompt: 'p', parent_session_id: null })
      .execute();
    await database.db.updateTable('profiles').set({ memory_review_interval: 3, skill_review_interval: 5 }).where('id', '=', 'main').execute();
  });

  it('fires per interval, resets on a write, skips scheduled and failed turns, and counts a turn once', async () => {
    const first = event();
    expect((await recordTurnCompletion(database.db, first)).counters).toEqual({ userTurnsSinceMemory: 1, iterationsSinceSkill: 1 });
    expect((await recordTurnCompletion(database.db, first)).counters).toEqual({ userTurnsSinceMemory: 1, iterationsSinceSkill: 1 });
    expect((await recordTurnCompletion(database.db, event({ memoryUsed: true, iterations: 2 }))).counters).toEqual({
      userTurnsSinceMemory: 0,
      iterationsSinceSkill: 3,
    });
    // Due on both counts, but a scheduled run and a failed turn are never reviewed.
    expect(await recordTurnCompletion(database.db, event({ scheduled: true, iterations: 2 }))).toMatchObject({ reviewId: null });
    expect(await recordTurnCompletion(database.db, event({ errored: true }))).toMatchObject({ reviewId: null });
    const due = await recordTurnCompletion(database.db, event());
    expect(due).toMatchObject({ kinds: ['memory', 'skill'], counters: { userTurnsSinceMemory: 0, iterationsSinceSkill: 0 } });
    expect(due.reviewId).not.toBeNull();

    await database.db.updateTable('profiles').set({ memory_review_interval: 0 }).where('id', '=', 'main').execute();
    for (let i = 0; i < 4; i++) expect((await recordTurnCompletion(database.db, event({ iterations: 0 }))).reviewId).toBeNull();
  });

  it("reads the turn's own successful memory and skill writes when the event does not say", async () => {
    await database.db.updateTable('profiles').set({ memory_review_interval: 3 }).where('id', '=', 'main').execute();
    const before = (await recordTurnCompletion(database.db, event({ iterations: 0 }))).counters;
    const turnId = randomUUID();
    const seq = Date.now() % 1_000_000;
    await database.db
      .insertInto('messages')
      .values([
        { session_id: sessionId, seq, turn_id: turnId, role: 'tool', content: '{"success":true,"target":"user"}', tool_call_id: 'a', tool_name: 'memory', tool_calls: null },
        { session_id: sessionId, seq: seq + 1, turn_id: turnId, role: 'tool', content: '{"success":false,"error":"no match"}', tool_call_id: 'b', tool_name: 'skill_manage', tool_calls: null },
      ])
      .execute();
    const after = await recordTurnCompletion(database.db, event({ turnId, iterations: 1, memoryUsed: undefined, skillUsed: undefined }));
    // The successful memory write resets its counter; the failed skill write does not.
    expect(after.counters).toEqual({ userTurnsSinceMemory: 0, iterationsSinceSkill: before.iterationsSinceSkill + 1 });
  });

  it('lets exactly one of several reviewers claim a review, and fences the loser', async () => {
    const { reviewId } = await recordTurnCompletion(database.db, event({ iterations: 5 }));
    const claims = await Promise.all([1, 2, 3, 4].map((n) => claimReview(database.db, reviewId!, `reviewer-${n}`, 60_000)));
    const winners = claims.filter((claim) => claim !== null);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    expect(await finishReview(database.db, { ...winner, token: String(Number(winner.token) + 100) }, { status: 'done', actions: [], summary: null, error: null })).toBe(false);
    expect(await finishReview(database.db, winner, { status: 'done', actions: [], summary: 'ok', error: null })).toBe(true);
    expect(await claimReview(database.db, reviewId!, 'late', 60_000)).toBeNull();
  });
});
