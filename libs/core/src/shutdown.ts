import type { Logger } from './logger.ts';

type Disposer = { name: string; dispose: () => Promise<void> | void };

/**
 * Runs registered disposers in reverse order of registration, each in its own try/catch, bounded
 * by a deadline. Calling `shutdown` twice returns the same promise.
 */
export class Shutdown {
  #disposers: Disposer[] = [];
  #running: Promise<boolean> | undefined;
  readonly #logger: Logger;
  readonly #deadlineMs: number;

  constructor(options: { logger: Logger; deadlineMs: number }) {
    this.#logger = options.logger;
    this.#deadlineMs = options.deadlineMs;
  }

  add(name: string, dispose: () => Promise<void> | void): void {
    this.#disposers.push({ name, dispose });
  }

  get started(): boolean {
    return this.#running !== undefined;
  }

  /** Resolves true when every disposer finished before the deadline. */
  shutdown(): Promise<boolean> {
    this.#running ??= this.#run();
    return this.#running;
  }

  async #run(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.#deadlineMs);
      timer.unref();
    });
    let current: string | undefined;
    const steps = (async () => {
      for (const disposer of [...this.#disposers].reverse()) {
        current = disposer.name;
        try {
          await disposer.dispose();
        } catch (error) {
          this.#logger.error({ err: error, step: disposer.name }, 'shutdown step failed');
        }
      }
      return true as const;
    })();
    const finished = await Promise.race([steps, deadline]);
    clearTimeout(timer);
    // Which step it was still waiting on: what an operator (or a failing test) needs to look at.
    if (!finished) this.#logger.warn({ deadlineMs: this.#deadlineMs, waitingOn: current }, 'shutdown deadline reached');
    return finished;
  }
}

/** The one place that installs signal handlers; it fans out to a Shutdown and exits. */
export function exitOnSignals(shutdown: Shutdown, logger: Logger): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (shutdown.started) return;
    logger.info({ signal }, 'shutting down');
    void shutdown.shutdown().then((clean) => process.exit(clean ? 0 : 1));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
