import { backoffMs, sleep } from '@herald/core';
import type { Logger } from '@herald/core';
import { acquirePlatformLease, releasePlatformLease, renewPlatformLease } from '@herald/leases';
import type { Db } from '@herald/db';

export interface LeasedTaskOptions {
  db: Db;
  /** The lease name: one holder cluster-wide, e.g. 'telegram-poll:<bot id>'. */
  name: string;
  owner: string;
  ttlMs: number;
  logger: Logger;
  /** Runs while the lease is held; `signal` aborts when it is lost or the task stops. */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * Keeps trying to hold a platform lease and runs the task while holding it. Replicas that do not
 * hold it wait and try again, so when the holder dies another one takes over within a TTL.
 */
export class LeasedTask {
  readonly #options: LeasedTaskOptions;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #holding = false;

  constructor(options: LeasedTaskOptions) {
    this.#options = options;
  }

  get holding(): boolean {
    return this.#holding;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error('stopping'));
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { db, name, owner, ttlMs, logger } = this.#options;
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      let token: string | undefined;
      try {
        token = await acquirePlatformLease(db, name, owner, ttlMs);
      } catch (error) {
        logger.warn({ err: error, lease: name }, 'platform lease claim failed');
      }
      if (token === undefined) {
        await sleep(Math.max(100, Math.floor(ttlMs / 3)), this.#stop.signal).catch(() => undefined);
        continue;
      }
      logger.info({ lease: name }, 'holding the platform lease');
      this.#holding = true;
      const lost = new AbortController();
      const held = token;
      const renew = setInterval(
        () => {
          renewPlatformLease(db, name, owner, held, ttlMs).then(
            (ok) => {
              if (!ok) lost.abort(new Error(`lease ${name} lost`));
            },
            (error: unknown) => logger.warn({ err: error, lease: name }, 'platform lease renewal failed; will retry'),
          );
        },
        Math.max(50, Math.floor(ttlMs / 3)),
      );
      try {
        await this.#options.run(AbortSignal.any([lost.signal, this.#stop.signal]));
        failures = 0;
      } catch (error) {
        if (!lost.signal.aborted && !this.#stop.signal.aborted) {
          failures++;
          logger.error({ err: error, lease: name, failures }, 'leased task failed; retrying');
        }
      } finally {
        clearInterval(renew);
        this.#holding = false;
        if (!lost.signal.aborted) await releasePlatformLease(db, name, owner, held).catch(() => undefined);
      }
      // A task that keeps failing (a revoked token, the platform down) backs off instead of spinning;
      // the lease is released meanwhile, so a healthier replica may take it.
      if (!this.#stop.signal.aborted) {
        await sleep(failures === 0 ? 500 : backoffMs(failures, 1000, 60_000), this.#stop.signal).catch(() => undefined);
      }
    }
  }
}
