const marker = Symbol.for('herald.provider-error');

export type ProviderErrorKind =
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'connection'
  | 'malformed'
  | 'auth'
  | 'bad_request'
  /** The prompt is larger than the model's window (OpenAI context_length_exceeded, Anthropic "prompt is too long", 413). */
  | 'context_overflow'
  | 'aborted';

/**
 * A model of the failover chain a failed call went through, as the person's one line names it:
 * its `provider/model` and where its provider is set up (key variables, never a key).
 */
export interface ChainModel {
  ref: string;
  setup: { keys: string; baseURL: string };
}

/**
 * A failed model call, classified by who failed so the loop can decide between retrying and
 * turning it into an error reply.
 */
export class ProviderError extends Error {
  readonly [marker] = true;
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** The chain behind the call, when it went through failover: what the failure line names. */
  readonly chain: readonly ChainModel[] | undefined;

  constructor(message: string, options: { kind: ProviderErrorKind; status?: number; retryAfterMs?: number; cause?: unknown; chain?: readonly ChainModel[] }) {
    super(message, { cause: options.cause });
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.chain = options.chain;
  }

  get isRetryable(): boolean {
    return this.kind === 'rate_limit' || this.kind === 'server' || this.kind === 'timeout' || this.kind === 'connection' || this.kind === 'malformed';
  }

  static isInstance(value: unknown): value is ProviderError {
    return typeof value === 'object' && value !== null && marker in value;
  }
}
