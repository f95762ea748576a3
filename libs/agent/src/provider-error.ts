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
 * A failed model call, classified by who failed so the loop can decide between retrying and
 * turning it into an error reply.
 */
export class ProviderError extends Error {
  readonly [marker] = true;
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: { kind: ProviderErrorKind; status?: number; retryAfterMs?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }

  get isRetryable(): boolean {
    return this.kind === 'rate_limit' || this.kind === 'server' || this.kind === 'timeout' || this.kind === 'connection' || this.kind === 'malformed';
  }

  static isInstance(value: unknown): value is ProviderError {
    return typeof value === 'object' && value !== null && marker in value;
  }
}
