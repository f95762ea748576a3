import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { fireNextHookEvent } from '@herald/hooks';
import type { Hooks } from '@herald/hooks';

export interface HookEventOptions {
  db: Db;
  hooks: Hooks;
  logger: Logger;
  /** How often the table is read for new events. */
  tickMs: number;
}

/**
 * Fires the hook events of changes made where no hook may run (cron_fire when a cron run starts,
 * delivery_failed when a delivery gives up): their rows are written by the change's own
 * transaction (herald_queue_hook_event), so an event exists exactly when its change committed.
 * Each row is taken under its lock (SKIP LOCKED: scheduler replicas share the table, never a row),
 * its hooks fired, and the row deleted with the audit of what the hooks decided, in one
 * transaction. A scheduler that dies while the hooks run leaves the row, and the next one fires it:
 * the only repeat, as with pre_tool_call, is of hooks that had answered before that commit.
 */
export class HookEventService {
  readonly #options: HookEventOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(options: HookEventOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.drain(), this.#options.tickMs);
  }

  /** Fires every waiting event; returns how many. Concurrent calls share one run. */
  drain(): Promise<number> {
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #drain(): Promise<number> {
    let fired = 0;
    try {
      while (await this.#fireOne()) fired += 1;
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'hook events could not be fired; will retry');
    }
    return fired;
  }

  #fireOne(): Promise<boolean> {
    return fireNextHookEvent(this.#options.db, this.#options.hooks);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
