import { sql } from 'kysely';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { isUuid } from '@herald/core';
import type { ReviewerRoleConfig } from '@herald/core';
import type { Database, ReviewKind, ReviewsTable } from '@herald/db';
import { sendJob } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';

type Executor = Kysely<Database> | Transaction<Database>;

/** A triggered review is one pg-boss job of this queue, with the review's id as the job's id. */
export const REVIEW_QUEUE = 'review';
/** Reviews whose last attempt failed or never finished (crashes), for the reviewer to close. */
export const REVIEW_DEAD_LETTER_QUEUE = 'review-dead-letter';

export interface ReviewJob {
  reviewId: string;
}

/**
 * The review queues' policy from the config: HERALD_REVIEW_MAX_ATTEMPTS runs in all (crashes
 * count), exponential backoff from HERALD_REVIEW_RETRY_BASE_MS (whole seconds, pg-boss's unit),
 * and a run older than HERALD_REVIEW_TIMEOUT_MS counts as dead and is retried.
 */
export function reviewQueues(reviewer: ReviewerRoleConfig): QueueSpec[] {
  const week = 7 * 24 * 60;
  return [
    { name: REVIEW_DEAD_LETTER_QUEUE, retryLimit: 2, retryDelaySeconds: 5, retryBackoff: true, expireInSeconds: 60, retentionMinutes: week },
    {
      name: REVIEW_QUEUE,
      retryLimit: reviewer.maxAttempts - 1,
      retryDelaySeconds: Math.max(1, Math.ceil(reviewer.retryBaseMs / 1000)),
      retryBackoff: true,
      expireInSeconds: Math.ceil(reviewer.timeoutMs / 1000),
      retentionMinutes: week,
      deadLetter: REVIEW_DEAD_LETTER_QUEUE,
    },
  ];
}

/**
 * What the worker emits once per finished turn. The counters "since the last review" live in
 * review_counters, so the event carries this turn's share and the store adds it up.
 */
export interface TurnCompletedEvent {
  turnId: string;
  sessionId: string;
  profileId: string;
  userId: string;
  /** User turns this turn answered (1; a collect-mode turn that merged messages still counts once). */
  userTurns: number;
  /** Tool-loop iterations (model calls) of this turn. */
  iterations: number;
  /** Stopped by the person, crashed too often, or ended in an error: never reviewed. */
  interrupted: boolean;
  errored: boolean;
  /** A scheduled run (cron): never reviewed. */
  scheduled: boolean;
  /**
   * The exact JSON text of the tool definitions the turn's model calls carried, made only when a
   * review is due (the worker's turn records the common turn's counts without them, in
   * herald_finish_turn_next).
   */
  toolDefinitions: () => string;
}

export interface CompletionOutcome {
  /** Set when this turn triggered a review: its row, and its job sent in the same transaction. */
  reviewId: string | null;
  kinds: ReviewKind[];
  counters: { userTurnsSinceMemory: number; iterationsSinceSkill: number };
}

/** Runs `fn` in `db` when it is a transaction already, else in a new one. */
function inTransaction<T>(db: Executor, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Transaction<Database>) : db.transaction().execute(fn);
}

/**
 * Folds one completion event into the session's counters and, when a trigger fires, creates the
 * review row and sends its pg-boss job, in one transaction (pass the worker's, or get a new one):
 * herald_record_completion holds the rules (Hermes': a memory review every N user turns without a
 * memory write, a skill review after N tool-loop iterations without a skill write, N per profile,
 * 0 disables; never after an interrupted or failed turn or a scheduled run, whose counts still add
 * up). A turn counted twice counts once, and a review's job id is the review's id, so a turn is
 * reviewed at most once.
 */
export async function recordTurnCompletion(db: Executor, event: TurnCompletedEvent): Promise<CompletionOutcome> {
  return inTransaction(db, async (trx) => {
    const row = await completionCall(trx, event, event.toolDefinitions());
    if (row.review_id !== null) await sendReviewJob(trx, row.review_id);
    return completionOutcome(row);
  });
}

interface CompletionRow {
  review_id: string | null;
  kinds: ReviewKind[];
  user_turns_since_memory: number;
  iterations_since_skill: number;
}

async function completionCall(db: Executor, event: TurnCompletedEvent, definitions: string | null): Promise<CompletionRow> {
  const result = await sql<CompletionRow>`
    SELECT * FROM herald_record_completion(${event.turnId}::uuid, ${event.sessionId}::uuid, ${event.profileId}, ${event.userId},
      ${event.userTurns}::integer, ${event.iterations}::integer, ${event.interrupted}, ${event.errored}, ${event.scheduled},
      ${definitions}::text)`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('herald_record_completion returned nothing');
  return row;
}

function completionOutcome(row: CompletionRow): CompletionOutcome {
  return {
    reviewId: row.review_id,
    kinds: row.review_id === null ? [] : row.kinds,
    counters: { userTurnsSinceMemory: row.user_turns_since_memory, iterationsSinceSkill: row.iterations_since_skill },
  };
}

/** Sends a review's job; false when it exists already (the job id is the review id). */
export function sendReviewJob(db: Executor, reviewId: string): Promise<boolean> {
  return sendJob(db, REVIEW_QUEUE, { reviewId } satisfies ReviewJob, { id: reviewId });
}

export type ReviewRow = Selectable<ReviewsTable>;

/** One run of a review: `attempt` is its fencing token (the row's attempts when it started). */
export interface ReviewRun {
  review: ReviewRow;
  attempt: number;
}

/**
 * Starts run `retryCount + 1` of a review (pg-boss's retry count of its job). A review already
 * done or failed is not run again, and neither is one a later run has taken; a run left
 * 'running' by a reviewer that died is taken over, its writes fenced off from then on.
 */
export async function startReviewRun(db: Executor, reviewId: string, retryCount: number): Promise<ReviewRun | null> {
  const row = await db
    .updateTable('reviews')
    .set({ status: 'running', attempts: retryCount + 1, started_at: sql`coalesce(started_at, clock_timestamp())` })
    .where('id', '=', reviewId)
    .where('status', 'in', ['pending', 'running'])
    .where('attempts', '<=', retryCount)
    .returningAll()
    .executeTakeFirst();
  return row ? { review: row, attempt: row.attempts } : null;
}

const supersededMarker = Symbol.for('herald.review-run-superseded');

/** A later run of the review took over (this one outlived its job's expiry): stop without writing. */
export class ReviewSupersededError extends Error {
  readonly [supersededMarker] = true;
  override readonly name = 'ReviewSupersededError';
  constructor(reviewId: string) {
    super(`a later run took over review ${reviewId}`);
  }
  static isInstance(value: unknown): value is ReviewSupersededError {
    return typeof value === 'object' && value !== null && supersededMarker in value;
  }
}

/** A write of a review run, in a transaction that first checks the run is still the review's. */
export async function fencedReviewWrite<T>(db: Kysely<Database>, run: ReviewRun, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const held = await sql`SELECT 1 FROM reviews WHERE id = ${run.review.id} AND status = 'running'
      AND attempts = ${run.attempt} FOR SHARE`.execute(trx);
    if (held.rows.length === 0) throw new ReviewSupersededError(run.review.id);
    return fn(trx);
  });
}

export interface ReviewResult {
  status: 'done' | 'failed';
  actions: unknown[];
  summary: string | null;
  error: string | null;
  usage?: { inputTokens: number; cachedInputTokens: number; outputTokens: number };
}

/** Records the outcome; false when a later run owns the review. */
export async function finishReview(db: Executor, run: ReviewRun, result: ReviewResult): Promise<boolean> {
  const updated = await db
    .updateTable('reviews')
    .set({
      status: result.status,
      actions: JSON.stringify(result.actions),
      summary: result.summary,
      error: result.error,
      input_tokens: result.usage?.inputTokens ?? 0,
      cached_input_tokens: result.usage?.cachedInputTokens ?? 0,
      output_tokens: result.usage?.outputTokens ?? 0,
      finished_at: sql`clock_timestamp()`,
    })
    .where('id', '=', run.review.id)
    .where('status', '=', 'running')
    .where('attempts', '=', run.attempt)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** A failed run that pg-boss will retry: the row waits as pending with the error. */
export async function handBackReview(db: Executor, run: ReviewRun, error: string): Promise<void> {
  await db.updateTable('reviews').set({ status: 'pending', error }).where('id', '=', run.review.id).where('status', '=', 'running').where('attempts', '=', run.attempt).execute();
}

/**
 * Closes a review whose job was dead-lettered: its last run failed (already recorded) or no run
 * finished at all (reviewers died). Returns true when this closed it.
 */
export async function giveUpReview(db: Executor, reviewId: string): Promise<boolean> {
  const updated = await db
    .updateTable('reviews')
    .set({
      status: 'failed',
      error: sql`'gave up after ' || attempts || ' attempt(s) that did not finish (' || coalesce(error, 'the reviewer stopped') || ')'`,
      finished_at: sql`clock_timestamp()`,
    })
    .where('id', '=', reviewId)
    .where('status', 'in', ['pending', 'running'])
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Reviews not finished yet, oldest first: a starting reviewer re-sends their jobs (no-ops when they exist). */
export async function openReviews(db: Executor, limit = 1000): Promise<string[]> {
  const rows = await db.selectFrom('reviews').select('id').where('status', 'in', ['pending', 'running']).orderBy('created_at').limit(limit).execute();
  return rows.map((row) => row.id);
}

export interface ReviewView {
  id: string;
  turn_id: string;
  session_id: string;
  profile: string;
  user_id: string;
  kinds: ReviewKind[];
  status: string;
  attempts: number;
  actions: unknown[];
  summary: string | null;
  error: string | null;
  usage: { input_tokens: number; cached_input_tokens: number; output_tokens: number };
  created_at: string;
  finished_at: string | null;
}

function reviewView(row: ReviewRow): ReviewView {
  return {
    id: row.id,
    turn_id: row.turn_id,
    session_id: row.session_id,
    profile: row.profile_id,
    user_id: row.user_id,
    kinds: row.kinds,
    status: row.status,
    attempts: row.attempts,
    actions: row.actions,
    summary: row.summary,
    error: row.error,
    usage: { input_tokens: row.input_tokens, cached_input_tokens: row.cached_input_tokens, output_tokens: row.output_tokens },
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}

export async function listReviews(db: Executor, filter: { profileId?: string | undefined; sessionId?: string | undefined; limit?: number | undefined }): Promise<ReviewView[]> {
  let query = db
    .selectFrom('reviews')
    .selectAll()
    .orderBy('created_at', 'desc')
    .limit(filter.limit ?? 50);
  if (filter.profileId !== undefined) query = query.where('profile_id', '=', filter.profileId);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  return (await query.execute()).map(reviewView);
}

export async function getReview(db: Executor, id: string): Promise<ReviewView | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db.selectFrom('reviews').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? reviewView(row) : undefined;
}
