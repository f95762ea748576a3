import { ProviderError } from '../provider-error.ts';

/** The fields both official SDKs put on their APIError classes. */
interface SdkErrorLike {
  name?: string;
  status?: number;
  headers?: Headers | Record<string, string> | undefined;
  message?: string;
}

function header(headers: SdkErrorLike['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  return (headers as Record<string, string>)[name];
}

export function retryAfterMs(headers: SdkErrorLike['headers']): number | undefined {
  const ms = Number(header(headers, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = header(headers, 'retry-after');
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
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
    const common = { status, cause: error, retryAfterMs: retryAfterMs(e.headers) };
    if (status === 429) return new ProviderError(message, { kind: 'rate_limit', ...common });
    if (status === 408) return new ProviderError(message, { kind: 'timeout', ...common });
    if (status >= 500) return new ProviderError(message, { kind: 'server', ...common });
    if (status === 401 || status === 403) return new ProviderError(message, { kind: 'auth', ...common });
    return new ProviderError(message, { kind: 'bad_request', ...common });
  }
  if (error instanceof SyntaxError) return new ProviderError(message, { kind: 'malformed', cause: error });
  return new ProviderError(message, { kind: 'connection', cause: error });
}

export function malformed(provider: string, what: string): ProviderError {
  return new ProviderError(`${provider}: malformed response: ${what}`, { kind: 'malformed' });
}
