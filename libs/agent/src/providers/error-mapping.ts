import { ProviderError } from '../provider-error.ts';

/** The fields both official SDKs put on their APIError classes. */
interface SdkErrorLike {
  name?: string;
  status?: number;
  headers?: Headers | Record<string, string> | undefined;
  message?: string;
}

/** `retry-after-ms` (OpenAI's own, milliseconds) wins over `retry-after` (seconds or an HTTP date). */
export function parseRetryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers.get('retry-after');
  if (after !== null && after.trim() !== '') {
    const seconds = Number(after);
    if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/** How providers say a prompt does not fit: OpenAI's error code, Anthropic's wording, vLLM's and others'. */
const OVERFLOW = /context_length_exceeded|prompt is too long|maximum context length|context window|too many tokens/i;

/** `detail`: the error's code and message, which tell a context overflow from another bad request. */
export function kindForStatus(status: number, detail = ''): ProviderError['kind'] {
  if (status === 413 || (status === 400 && OVERFLOW.test(detail))) return 'context_overflow';
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/**
 * Classifies an SDK failure by who failed. The SDKs' class names are the same in openai and
 * @anthropic-ai/sdk, so one mapping serves both without importing either.
 */
export function toProviderError(provider: string, error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = (error ?? {}) as SdkErrorLike;
  const name = e.name ?? '';
  const message = `${provider}: ${e.message ?? String(error)}`;
  if (name === 'APIUserAbortError' || name === 'AbortError') {
    return new ProviderError(message, { kind: 'aborted', cause: error });
  }
  if (name === 'APIConnectionTimeoutError') return new ProviderError(message, { kind: 'timeout', cause: error });
  if (name === 'APIConnectionError') return new ProviderError(message, { kind: 'connection', cause: error });
  const status = e.status;
  if (typeof status === 'number') {
    const after = e.headers instanceof Headers ? parseRetryAfterMs(e.headers) : undefined;
    return new ProviderError(message, {
      kind: kindForStatus(status, `${String((error as { code?: unknown }).code ?? '')} ${e.message ?? ''}`),
      status,
      cause: error,
      ...(after === undefined ? {} : { retryAfterMs: after }),
    });
  }
  if (error instanceof SyntaxError) return new ProviderError(message, { kind: 'malformed', cause: error });
  return new ProviderError(message, { kind: 'connection', cause: error });
}

export function malformed(provider: string, what: string): ProviderError {
  return new ProviderError(`${provider}: malformed response: ${what}`, { kind: 'malformed' });
}
