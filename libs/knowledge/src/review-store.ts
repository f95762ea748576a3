import { sql } from 'kysely';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, ReviewKind, ReviewsTable } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

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
  /** A successful memory / skill_manage call happened in this turn (it resets that counter). Omitted: read from the turn's tool results. */
  memoryUsed?: boolean | undefined;
  skillUsed?: boolean | undefined;
  /** Stopped by the person, crashed too often, or ended in an error: never reviewed. */
  interrupted: boolean;
  errored: boolean;
  /** A scheduled run (cron): never reviewed. */
  scheduled: boolean;
  /** The exact JSON text of the tool definitions the turn's model calls carried. */
  toolDefinitions: string;
}

export interface CompletionOutcome {
  /** Set when this turn triggered a review: the row to hand to the reviewer queue. */
  reviewId: string | null;
  kinds: ReviewKind[];
  counters: { userTurnsSinceMemory: number; iterationsSinceSkill: number };
}

/**
 * Folds one completion event into the session's counters and, when a trigger fires, creates the
 * review row: one call of herald_record_completion (one round trip, on the worker after every
 * reply). Hermes' rules: a memory review every N user turns without a memory write, a skill review
 * after N tool-loop iterations without a skill write (N per profile, 0 disables); never after an
 * interrupted or failed turn or a scheduled run (their counts still add up, so the next answered
 * turn fires). A turn counted twice counts once. Without `memoryUsed`/`skillUsed`, the turn's own
 * successful memory and skill_manage results decide.
 */
export async function recordTurnCompletion(db: Executor, event: TurnCompletedEvent): Promise<CompletionOutcome> {
  const result = await sql<{ review_id: string | null; kinds: ReviewKind[]; user_turns_since_memory: number; iterations_since_skill: number }>`
    SELECT * FROM herald_record_completion(${event.turnId}::uuid, ${event.sessionId}::uuid, ${event.profileId}, ${event.userId},
      ${event.userTurns}::integer, ${event.iterations}::integer, ${event.memoryUsed ?? null}::boolean, ${event.skillUsed ?? null}::boolean,
      ${event.interrupted}, ${event.errored}, ${event.scheduled}, ${event.toolDefinitions})`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('herald_record_completion returned nothing');
  return {
    reviewId: row.review_id,
    kinds: row.kinds,
    counters: { userTurnsSinceMemory: row.user_turns_since_memory, iterationsSinceSkill: row.iterations_since_skill },
  };
}

export type ReviewRow = Selectable<ReviewsTable>;

export interface ReviewClaim {
  review: ReviewRow;
  token: string;
  owner: string;
}

/**
 * Takes a review for one run: a pending one that is due, or a running one whose claimer stopped
 * renewing (it crashed). The token fences the run's writes, so a reviewer that lost its claim can
 * write nothing more; two replicas given the same job cannot both win.
 */
export async function claimReview(db: Executor, reviewId: string, owner: string, ttlMs: number): Promise<ReviewClaim | null> {
  const row = await db
    .updateTable('reviews')
    .set({
      status: 'running',
      attempts: sql`attempts + 1`,
      claim_token: sql`nextval('review_claim_tokens')`,
      claimed_by: owner,
      claim_expires_at: sql`clock_timestamp() + make_interval(secs => ${ttlMs / 1000})`,
      started_at: sql`coalesce(started_at, clock_timestamp())`,
    })
    .where('id', '=', reviewId)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', sql<Date>`clock_timestamp()`)]),
        eb.and([eb('status', '=', 'running'), eb('claim_expires_at', '<', sql<Date>`clock_timestamp()`)]),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
  if (!row || row.claim_token === null) return null;
  return { review: row, token: String(row.claim_token), owner };
}

export async function renewReviewClaim(db: Executor, claim: ReviewClaim, ttlMs: number): Promise<boolean> {
  const result = await db
    .updateTable('reviews')
    .set({ claim_expires_at: sql`clock_timestamp() + make_interval(secs => ${ttlMs / 1000})` })
    .where('id', '=', claim.review.id)
    .where('status', '=', 'running')
    .where(sql<boolean>`claim_token = ${claim.token}::bigint`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

const claimMarker = Symbol.for('herald.review-claim-lost');

/** The review's claim expired and may have been taken over: the run must stop without writing. */
export class ReviewClaimLostError extends Error {
  readonly [claimMarker] = true;
  override readonly name = 'ReviewClaimLostError';
  constructor(reviewId: string) {
    super(`the claim on review ${reviewId} was lost`);
  }
  static isInstance(value: unknown): value is ReviewClaimLostError {
    return typeof value === 'object' && value !== null && claimMarker in value;
  }
}

/** A write of a review run, in a transaction that first checks the run still holds its claim. */
export async function fencedReviewWrite<T>(
  db: Kysely<Database>,
  claim: ReviewClaim,
  fn: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const held = await sql`SELECT 1 FROM reviews WHERE id = ${claim.review.id} AND status = 'running'
      AND claim_token = ${claim.token}::bigint AND claim_expires_at > clock_timestamp() FOR SHARE`.execute(trx);
    if (held.rows.length === 0) throw new ReviewClaimLostError(claim.review.id);
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

/** Records the outcome; false when the claim was lost meanwhile (another run owns the review). */
export async function finishReview(db: Executor, claim: ReviewClaim, result: ReviewResult): Promise<boolean> {
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
      claim_expires_at: null,
      finished_at: sql`clock_timestamp()`,
    })
    .where('id', '=', claim.review.id)
    .where('status', '=', 'running')
    .where(sql<boolean>`claim_token = ${claim.token}::bigint`)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Hands a failed run back for another attempt after `delayMs`. */
export async function retryReviewLater(db: Executor, claim: ReviewClaim, error: string, delayMs: number): Promise<boolean> {
  const updated = await db
    .updateTable('reviews')
    .set({
      status: 'pending',
      error,
      claim_token: null,
      claim_expires_at: null,
      next_attempt_at: sql`clock_timestamp() + make_interval(secs => ${delayMs / 1000})`,
    })
    .where('id', '=', claim.review.id)
    .where('status', '=', 'running')
    .where(sql<boolean>`claim_token = ${claim.token}::bigint`)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/**
 * Reviews whose job may be gone: pending and due for longer than `graceMs` (the enqueue after the
 * commit failed, or Redis lost it), or running with an expired claim (the reviewer died).
 */
export async function findDueReviews(db: Executor, graceMs: number, limit = 100): Promise<{ id: string; attempts: number }[]> {
  return db
    .selectFrom('reviews')
    .select(['id', 'attempts'])
    .where((eb) =>
      eb.or([
        eb.and([
          eb('status', '=', 'pending'),
          eb('next_attempt_at', '<', sql<Date>`clock_timestamp() - make_interval(secs => ${graceMs / 1000})`),
        ]),
        eb.and([eb('status', '=', 'running'), eb('claim_expires_at', '<', sql<Date>`clock_timestamp()`)]),
      ]),
    )
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
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

export async function listReviews(
  db: Executor,
  filter: { profileId?: string | undefined; sessionId?: string | undefined; limit?: number | undefined },
): Promise<ReviewView[]> {
  let query = db.selectFrom('reviews').selectAll().orderBy('created_at', 'desc').limit(filter.limit ?? 50);
  if (filter.profileId !== undefined) query = query.where('profile_id', '=', filter.profileId);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  return (await query.execute()).map(reviewView);
}

export async function getReview(db: Executor, id: string): Promise<ReviewView | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const row = await db.selectFrom('reviews').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? reviewView(row) : undefined;
}
