import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { finishReview, recordTurnCompletion, REVIEW_QUEUE, sendReviewJob, startReviewRun } from '@herald/knowledge';
import type { TurnCompletedEvent } from '@herald/knowledge';
import { toolSucceeded } from '@herald/tools';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import type { TestDatabase } from '../../../test/support/test-database.ts';

describe('review triggers and runs', () => {
  let database: TestDatabase;
  let sessionId: string;
  let seq = 1;
  const event = (overrides: Partial<TurnCompletedEvent> = {}): TurnCompletedEvent => ({
    turnId: randomUUID(),
    sessionId,
    profileId: 'main',
    userId: 'ada',
    userTurns: 1,
    iterations: 1,
    interrupted: false,
    errored: false,
    scheduled: false,
    toolDefinitions: () => '[]',
    ...overrides,
  });
  /** A tool result of the turn, as the worker stores it. */
  const toolResult = (turnId: string, toolName: string, content: string) =>
    database.db
      .insertInto('messages')
      .values({ session_id: sessionId, seq: seq++, turn_id: turnId, role: 'tool', content, tool_call_id: `c${seq}`, tool_name: toolName, tool_calls: null })
      .execute();
  const reviewJobs = async () => (await sql<{ id: string; data: { reviewId: string } }>`SELECT id, data FROM pgboss.job WHERE name = ${REVIEW_QUEUE}`.execute(database.db)).rows;

  beforeAll(async () => {
    database = await createTestDatabase();
    sessionId = randomUUID();
    await database.db
      .insertInto('sessions')
      .values({
        id: sessionId,
        profile_id: 'main',
        session_key: 'k',
        platform: 'api',
        chat_type: 'dm',
        chat_id: 'c',
        thread_id: null,
        origin_user_id: 'ada',
        system_prompt: 'p',
        parent_session_id: null,
      })
      .execute();
    await database.db.updateTable('profiles').set({ memory_review_interval: 3, skill_review_interval: 5 }).where('id', '=', 'main').execute();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('fires per interval, resets on a write, skips scheduled and failed turns, and counts a turn once', async () => {
    const first = event();
    expect((await recordTurnCompletion(database.db, first)).counters).toEqual({ userTurnsSinceMemory: 1, iterationsSinceSkill: 1 });
    expect((await recordTurnCompletion(database.db, first)).counters).toEqual({ userTurnsSinceMemory: 1, iterationsSinceSkill: 1 });
    const writer = event({ iterations: 2 });
    await toolResult(writer.turnId, 'memory', '{"success":true,"target":"user"}');
    expect((await recordTurnCompletion(database.db, writer)).counters).toEqual({ userTurnsSinceMemory: 0, iterationsSinceSkill: 3 });
    // Due on both counts, but a scheduled run and a failed turn are never reviewed.
    expect(await recordTurnCompletion(database.db, event({ scheduled: true, iterations: 2 }))).toMatchObject({ reviewId: null });
    expect(await recordTurnCompletion(database.db, event({ errored: true }))).toMatchObject({ reviewId: null });
    expect(await reviewJobs()).toEqual([]);
    const due = await recordTurnCompletion(database.db, event());
    expect(due).toMatchObject({ kinds: ['memory', 'skill'], counters: { userTurnsSinceMemory: 0, iterationsSinceSkill: 0 } });
    expect(due.reviewId).not.toBeNull();
    // The review's pg-boss job was sent in the same transaction, with the review's id.
    expect(await reviewJobs()).toEqual([{ id: due.reviewId, data: { reviewId: due.reviewId } }]);
    expect(await sendReviewJob(database.db, due.reviewId!)).toBe(false);

    await database.db.updateTable('profiles').set({ memory_review_interval: 0 }).where('id', '=', 'main').execute();
    for (let i = 0; i < 4; i++) expect((await recordTurnCompletion(database.db, event({ iterations: 0 }))).reviewId).toBeNull();
  });

  it('a completion whose transaction rolls back leaves neither a review nor its job', async () => {
    await database.db.updateTable('profiles').set({ memory_review_interval: 1 }).where('id', '=', 'main').execute();
    const before = (await reviewJobs()).length;
    const failed = database.db.transaction().execute(async (trx) => {
      expect((await recordTurnCompletion(trx, event())).reviewId).not.toBeNull();
      throw new Error('the worker lost its connection');
    });
    await expect(failed).rejects.toThrow(/lost its connection/);
    expect(await reviewJobs()).toHaveLength(before);
    await database.db.updateTable('profiles').set({ memory_review_interval: 3 }).where('id', '=', 'main').execute();
  });

  it("reads the turn's own successful memory and skill writes, whatever the key order", async () => {
    const before = (await recordTurnCompletion(database.db, event({ iterations: 0 }))).counters;
    const turnId = randomUUID();
    await toolResult(turnId, 'memory', '{"target":"user","success":true}');
    await toolResult(turnId, 'skill_manage', '{"success":false,"error":"no match"}');
    await toolResult(turnId, 'skill_manage', 'not json at all');
    const after = await recordTurnCompletion(database.db, event({ turnId, iterations: 1 }));
    // The successful memory write resets its counter; the failed skill writes do not.
    expect(after.counters).toEqual({ userTurnsSinceMemory: 0, iterationsSinceSkill: before.iterationsSinceSkill + 1 });
  });

  it('one rule for a successful tool write: herald_tool_succeeded and toolSucceeded agree', async () => {
    const samples = [
      '{"success":true}',
      '{"success":true,"target":"user","entries":[]}',
      '{"target":"memory","success":true}',
      ' {"success": true} ',
      '{"success":false,"error":"no match"}',
      '{"success":"true"}',
      '{"success":1}',
      '{"ok":true}',
      '[{"success":true}]',
      'true',
      '"success"',
      'null',
      '{"success":true',
      'Error: the tool failed',
      '',
    ];
    const rows = await sql<{ content: string; ok: boolean }>`
      SELECT c AS content, herald_tool_succeeded(c) AS ok FROM unnest(${samples}::text[]) AS c`.execute(database.db);
    expect(rows.rows.map((row) => [row.content, row.ok])).toEqual(samples.map((content) => [content, toolSucceeded(content)]));
    expect(rows.rows.filter((row) => row.ok)).toHaveLength(4);
  });

  it('a run starts once per attempt, fences the run a later one took over, and never reruns a finished review', async () => {
    const { reviewId } = await recordTurnCompletion(database.db, event({ iterations: 5 }));
    const first = await startReviewRun(database.db, reviewId!, 0);
    expect(first?.attempt).toBe(1);
    // A second job for the same attempt (there is none: the job id is the review id) would not start.
    expect(await startReviewRun(database.db, reviewId!, 0)).toBeNull();
    // pg-boss expired the first run (its reviewer stalled) and retried the job: the retry takes over.
    const second = await startReviewRun(database.db, reviewId!, 1);
    expect(second?.attempt).toBe(2);
    expect(await finishReview(database.db, first!, { status: 'done', actions: [], summary: 'late', error: null })).toBe(false);
    expect(await finishReview(database.db, second!, { status: 'done', actions: [], summary: 'ok', error: null })).toBe(true);
    expect(await startReviewRun(database.db, reviewId!, 2)).toBeNull();
    const row = await database.db.selectFrom('reviews').select(['status', 'attempts', 'summary']).where('id', '=', reviewId!).executeTakeFirst();
    expect(row).toEqual({ status: 'done', attempts: 2, summary: 'ok' });
  });
});
