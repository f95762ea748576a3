import { Worker } from 'node:worker_threads';

/**
 * The model's regular expression runs on a worker thread, never on the worker's event loop: a
 * catastrophic pattern (`(a+)+$` on a long line) would otherwise stall every other session of the
 * process and the lease renewals with them. The thread is terminated when the budget runs out.
 * The code is plain JavaScript evaluated in the thread, so it runs the same under tsx and compiled.
 */
const SCAN_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ pattern, files, max, lineChars }) => {
  const re = new RegExp(pattern);
  const found = [];
  for (const [file, text] of files) {
    const lines = text.split('\\n');
    for (let i = 0; i < lines.length && found.length < max; i += 1) {
      if (re.test(lines[i])) found.push([file, i + 1, lines[i].length > lineChars ? lines[i].slice(0, lineChars) + '...' : lines[i]]);
    }
    if (found.length >= max) break;
  }
  parentPort.postMessage(found);
});
`;

/** A hit: the file's index in the batch, its 1-based line number and the (cut) line. */
export type RegexHit = [file: number, line: number, text: string];

export class RegexBudgetExceeded extends Error {
  override name = 'RegexBudgetExceeded';
}

export class RegexScanner {
  readonly #worker: Worker;
  readonly #pattern: string;
  readonly #deadline: number;
  readonly #signal: AbortSignal;

  constructor(pattern: string, budgetMs: number, signal: AbortSignal) {
    this.#pattern = pattern;
    this.#deadline = Date.now() + budgetMs;
    this.#signal = signal;
    // The heap cap keeps a pattern that builds huge intermediate strings from taking the process down.
    this.#worker = new Worker(SCAN_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    this.#worker.unref();
  }

  /** Scans a batch of files; throws RegexBudgetExceeded when the time budget is used up. */
  scan(files: readonly [number, string][], max: number, lineChars: number): Promise<RegexHit[]> {
    this.#signal.throwIfAborted();
    return new Promise<RegexHit[]>((resolve, reject) => {
      const settle = (finish: () => void) => {
        clearTimeout(timer);
        this.#signal.removeEventListener('abort', onAbort);
        this.#worker.off('message', onMessage).off('error', onError);
        finish();
      };
      const onMessage = (hits: RegexHit[]) => settle(() => resolve(hits));
      const onError = (error: Error) => settle(() => reject(error));
      const onAbort = () => settle(() => reject(this.#signal.reason as Error));
      const timer = setTimeout(
        () => {
          settle(() => reject(new RegexBudgetExceeded('the regular expression took too long')));
          void this.#worker.terminate();
        },
        Math.max(0, this.#deadline - Date.now()),
      );
      this.#worker.on('message', onMessage).on('error', onError);
      this.#signal.addEventListener('abort', onAbort, { once: true });
      this.#worker.postMessage({ pattern: this.#pattern, files, max, lineChars });
    });
  }

  async close(): Promise<void> {
    await this.#worker.terminate();
  }
}
