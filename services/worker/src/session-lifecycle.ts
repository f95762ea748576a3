import type { Logger } from '@herald/core';
import type { Transaction } from 'kysely';
import type { Database, Db } from '@herald/db';
import { appendAudit } from '@herald/audit';
import { decisionAudit } from '@herald/hooks';
import type { Hooks } from '@herald/hooks';
import { fireNextSessionEnd } from '@herald/session';
import { claimHandoff, runHandoff } from '@herald/handoff';
import type { SessionEnd } from '@herald/session';

// What the worker does between sessions' turns (docs/long-chats.md): it carries out /handoff
// requests (each claimed by one worker, SKIP LOCKED and fenced) and fires on_session_end once for
// every session that ended, whatever ended it (compression, /new, a reset, a handoff) and wherever
// (the ingress ends sessions too, and need not load hooks for it).

/** How often an idle worker looks for handoff requests and ended sessions. */
export const LIFECYCLE_POLL_MS = 500;
/** At most this many of each per round, so one round never holds the loop for long. */
const BATCH = 20;

export interface SessionLifecycleOptions {
  db: Db;
  logger: Logger;
  owner: string;
  /** Platforms this worker can deliver to (a handoff to any other fails with that reason). */
  livePlatforms: ReadonlySet<string>;
  hooks?: Hooks | undefined;
  pollMs?: number;
}

export class SessionLifecycle {
  readonly #options: SessionLifecycleOptions;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;

  constructor(options: SessionLifecycleOptions) {
    this.#options = options;
  }

  start(): void {
    const tick = () => {
      if (this.#stopped) return;
      this.#round = this.round()
        .catch((error: unknown) => this.#options.logger.warn({ err: error }, 'session lifecycle round failed; trying again'))
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(tick, this.#options.pollMs ?? LIFECYCLE_POLL_MS);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#round;
  }

  /** One round: pending handoffs, then due on_session_end hooks. */
  async round(): Promise<void> {
    await this.#handoffs();
    for (let i = 0; i < BATCH; i++) {
      if (!(await fireNextSessionEnd(this.#options.db, (end, trx) => this.#fireEnd(end, trx)))) break;
    }
  }

  async #handoffs(): Promise<void> {
    const { db, logger, owner, livePlatforms } = this.#options;
    for (let i = 0; i < BATCH; i++) {
      const claim = await claimHandoff(db, owner);
      if (!claim) return;
      const result = await runHandoff(db, claim, (platform) => livePlatforms.has(platform));
      const fields = { handoffId: claim.id, sessionId: claim.sessionId, platform: claim.platform };
      if (result.kind === 'done') logger.info({ ...fields, chatId: result.targetChatId }, 'session handed off');
      else if (result.kind === 'failed') logger.warn({ ...fields, reason: result.reason }, 'handoff failed');
      else logger.warn(fields, 'handoff claim lost to another worker');
    }
  }

  async #fireEnd(end: SessionEnd, trx: Transaction<Database>): Promise<void> {
    const { hooks } = this.#options;
    if (hooks === undefined) return;
    const set = await hooks.forProfile(end.profileId);
    if (!set.has('on_session_end')) return;
    const payload = {
      session_id: end.sessionId,
      profile_id: end.profileId,
      platform: end.platform,
      chat_type: end.chatType,
      chat_id: end.chatId,
      user_id: end.originUserId,
      reason: end.reason,
      ended_at: end.endedAt.toISOString(),
      child_session_id: end.childSessionId,
    };
    const fired = await set.fire('on_session_end', payload, { key: end.sessionId });
    const audit = decisionAudit('on_session_end', fired.decisions, { actor: end.originUserId, profileId: end.profileId, sessionId: end.sessionId });
    if (audit.length > 0) await appendAudit(trx, audit);
  }
}
