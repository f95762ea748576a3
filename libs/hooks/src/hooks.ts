import type { Kysely, Transaction } from 'kysely';
import type { Logger } from '@herald/core';
import { readProfileSettings } from '@herald/db';
import type { Database, ProfileCache } from '@herald/db';
import type { AuditEntry } from '@herald/audit';
import { HookRegistry } from './hook-registry.ts';
import { HookSet } from './hook-set.ts';
import type { CommandRunner, HookDecision } from './hook-set.ts';
import type { HookEvent } from './hook-spec.ts';

export interface HooksOptions {
  registry: HookRegistry;
  db: Kysely<Database>;
  logger: Logger;
  /** The sandbox runner for command hooks; null where the process has none (they then fail, per on_error). */
  commands: CommandRunner | null;
  /** The process's profile cache; without one, each call reads the profile's hooks from Postgres. */
  profiles?: ProfileCache | undefined;
}

/** A role's hooks: the file's, and each profile's own (kept by the profile cache) when a turn or message needs them. */
export class Hooks {
  readonly #options: HooksOptions;

  constructor(options: HooksOptions) {
    this.#options = options;
  }

  /** No hooks at all: what a role gets without HERALD_HOOKS_FILE (profiles may still add theirs). */
  static none(db: Kysely<Database>, logger: Logger): Hooks {
    return new Hooks({ registry: HookRegistry.empty(), db, logger, commands: null });
  }

  async forProfile(profileId: string): Promise<HookSet> {
    const { db, profiles } = this.#options;
    const settings = profiles === undefined ? await readProfileSettings(db, profileId) : await profiles.get(profileId);
    const hooks = this.#options.registry.hooksFor(profileId, settings.hooks);
    return new HookSet(hooks, { db: this.#options.db, logger: this.#options.logger, commands: this.#options.commands });
  }
}

/** The decisions worth a line in the audit trail: every directive, failure and ignored answer. */
export function decisionAudit(
  event: HookEvent,
  decisions: readonly HookDecision[],
  where: { actor?: string | null; profileId?: string | null; sessionId?: string | null; turnId?: string | null; toolCallId?: string },
): AuditEntry[] {
  return decisions
    .filter((decision) => decision.outcome !== 'none' && decision.outcome !== 'queued')
    .map((decision) => ({
      kind: 'hook_decision' as const,
      actor: where.actor ?? null,
      profileId: where.profileId ?? null,
      sessionId: where.sessionId ?? null,
      turnId: where.turnId ?? null,
      subject: decision.hook,
      detail: {
        event,
        outcome: decision.outcome,
        ...(decision.directive ? { action: decision.directive.action } : {}),
        ...(decision.directive && 'message' in decision.directive ? { message: decision.directive.message } : {}),
        ...(decision.error ? { error: decision.error, on_error: decision.onError } : {}),
        ...(where.toolCallId ? { tool_call_id: where.toolCallId } : {}),
      },
    }));
}

/**
 * Replaces a profile's API-set hooks (already validated), in the caller's transaction. Other
 * processes hear of it when it commits (herald_profile_changed); the caller invalidates its own cache.
 */
export async function saveProfileHooks(trx: Transaction<Database>, profileId: string, hooks: readonly unknown[]): Promise<void> {
  await trx
    .insertInto('profile_hooks')
    .values({ profile_id: profileId, hooks: JSON.stringify(hooks) })
    .onConflict((conflict) => conflict.column('profile_id').doUpdateSet({ hooks: JSON.stringify(hooks), updated_at: new Date() }))
    .execute();
}
