import { recordModelFailover } from '@herald/telemetry';
import { ProviderError } from '../provider-error.ts';
import type { ChainModel } from '../provider-error.ts';
import { createProvider } from '../providers/index.ts';
import type { CompletionRequest, CompletionResult, Provider } from '../types.ts';
import type { KeyCooldowns } from './key-cooldowns.ts';
import type { ChainEntry } from '@herald/core';

/** What the failover did, for the log: a key skipped or cooled, a move to the next model. */
export type FailoverEvent =
  | { type: 'key-failed'; keyId: string; ref: string; kind: string; status: number | undefined; restMs: number; next: NextTry | undefined }
  | { type: 'auth-failed'; keyId: string; ref: string; restMs: number; next: NextTry | undefined }
  | { type: 'model-failover'; from: string; to: string; reason: string };

/** What the call tries after a failed key: the same model's next key, or the next model; none when the chain is spent. */
export interface NextTry {
  model: string;
  keyId: string;
}

export interface FailoverOptions {
  chain: readonly ChainEntry[];
  cooldowns: KeyCooldowns;
  timeoutMs: number;
  onEvent?: (event: FailoverEvent) => void;
  /** The provider for one model and key (tests); the official SDKs otherwise. */
  create?: (entry: ChainEntry, key: string) => Provider;
}

// How long a key rests when the provider gave no Retry-After.
const REST_MS: Partial<Record<ProviderError['kind'], number>> = {
  rate_limit: 30_000,
  server: 10_000,
  timeout: 10_000,
  connection: 10_000,
  malformed: 5_000,
  // A refused key will not heal by itself: out of the way for a good while, and said in the log.
  auth: 10 * 60_000,
};

/** Failures that another key or model may not have; a bad request or an overflow they all would. */
const failsOver = (error: ProviderError) => REST_MS[error.kind] !== undefined;

function asProviderError(error: unknown): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  return new ProviderError(`model call failed: ${(error as Error)?.message ?? String(error)}`, { kind: 'connection', cause: error });
}

/**
 * A chain of models, each with its provider's pool of keys, behind one Provider. A call goes to the
 * first key that is not resting; a rate limit, an overload, a server error, a timeout or a refused
 * connection rests that key for everyone (Retry-After honoured) and moves to the next key, then to
 * the next model; an auth error rests the key and says so; an invalid request or a context overflow
 * is thrown at once (compression handles the overflow). When every key rests, the error says how
 * long until the first is back, and the caller's retry waits that long.
 */
export class FailoverProvider implements Provider {
  readonly name: string;
  readonly model: string;
  readonly #options: FailoverOptions;
  readonly #clients = new Map<string, Provider>();

  constructor(options: FailoverOptions) {
    const primary = options.chain[0];
    if (!primary) throw new Error('a failover chain needs at least one model');
    this.name = primary.provider.name;
    this.model = primary.model;
    this.#options = options;
  }

  #client(entry: ChainEntry, key: { name: string; value: string }): Provider {
    const id = `${entry.ref}#${key.name}`;
    let client = this.#clients.get(id);
    if (!client) {
      client =
        this.#options.create?.(entry, key.value) ??
        createProvider({ provider: entry.provider.type, model: entry.model, apiKey: key.value, baseURL: entry.provider.baseURL, timeoutMs: this.#options.timeoutMs });
      this.#clients.set(id, client);
    }
    return client;
  }

  /**
   * The keys to try, in chain order, with the model each belongs to: those not resting; when every
   * key rests, the one back soonest, so a chain with nothing else to try behaves as a single key
   * did (the caller's retry has already waited out its Retry-After).
   */
  #candidates(): { entry: ChainEntry; key: { name: string; value: string }; keyId: string }[] {
    const all = this.#options.chain.flatMap((entry) => entry.provider.keys.map((key) => ({ entry, key, keyId: `${entry.provider.name}:${key.name}` })));
    const rests = all.map((candidate) => this.#options.cooldowns.remainingMs(candidate.keyId));
    const usable = all.filter((_, index) => rests[index] === 0);
    if (usable.length > 0) return usable;
    const soonest = rests.indexOf(Math.min(...rests));
    return all.slice(soonest, soonest + 1);
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    let last: ProviderError | undefined;
    // The model the call last gave up on, and why.
    let leaving: { entry: ChainEntry; reason: string } | undefined = undefined;
    const candidates = this.#candidates();
    const first = candidates[0];
    if (first && first.entry !== this.#options.chain[0]) leaving = { entry: this.#options.chain[0]!, reason: 'resting' };
    for (const [index, { entry, key, keyId }] of candidates.entries()) {
      if (leaving && leaving.entry !== entry) this.#movedOn(leaving.entry, entry, leaving.reason);
      leaving = undefined;
      // A call before this one may have streamed some text: what follows starts the answer again.
      if (index > 0) request.onRestart?.();
      try {
        const result = await this.#client(entry, key).complete(request);
        return { ...result, provider: entry.provider.name, keyName: key.name };
      } catch (caught) {
        const error = asProviderError(caught);
        if (request.signal?.aborted) throw error;
        // Another key or model would be refused the same: the person's line names this model.
        if (!failsOver(error)) throw named(error, error.message, [entry]);
        const next = candidates[index + 1];
        this.#rest(keyId, entry, error, next && { model: next.entry.ref, keyId: next.keyId });
        last = error;
        leaving = { entry, reason: error.kind };
      }
    }
    throw this.#exhausted(last);
  }

  #rest(keyId: string, entry: ChainEntry, error: ProviderError, next: NextTry | undefined): void {
    const restMs = error.retryAfterMs ?? REST_MS[error.kind] ?? 0;
    this.#options.cooldowns.coolDown(keyId, restMs, error.kind);
    if (error.kind === 'auth') this.#options.onEvent?.({ type: 'auth-failed', keyId, ref: entry.ref, restMs, next });
    else this.#options.onEvent?.({ type: 'key-failed', keyId, ref: entry.ref, kind: error.kind, status: error.status, restMs, next });
  }

  #movedOn(from: ChainEntry, to: ChainEntry, reason: string): void {
    recordModelFailover(from.ref, to.ref, reason);
    this.#options.onEvent?.({ type: 'model-failover', from: from.ref, to: to.ref, reason });
  }

  /**
   * Every key tried failed: the last failure, as the caller's retry should see it, naming the whole
   * chain (every model of it has failed now or is resting after failing).
   */
  #exhausted(last: ProviderError | undefined): ProviderError {
    const { chain } = this.#options;
    if (!last) return new ProviderError('the failover chain has no key to try', { kind: 'bad_request', chain: chain.map(chainModel) });
    const single = chain.length === 1 && chain[0]!.provider.keys.length === 1;
    return named(last, single ? last.message : `every key of every model failed; the last: ${last.message}`, chain);
  }
}

/** A chain entry as an error may carry it: the key variables' names, never their values. */
const chainModel = (entry: ChainEntry): ChainModel => ({ ref: entry.ref, setup: entry.provider.setup });

/** `error` as the caller sees it (same kind, status and Retry-After), naming the models behind it. */
function named(error: ProviderError, message: string, entries: readonly ChainEntry[]): ProviderError {
  return new ProviderError(message, {
    kind: error.kind,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    cause: error,
    chain: entries.map(chainModel),
  });
}
