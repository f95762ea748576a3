import { backoffMs, sleep } from '@herald/core';
import { ProviderError } from './provider-error.ts';
import type { CompletionRequest, CompletionResult, Provider } from './types.ts';

export interface RetryOptions {
  maxRetries: number;
  baseMs: number;
  capMs?: number;
  onRetry?: (error: ProviderError, attempt: number, delayMs: number) => void;
}

function asProviderError(error: unknown): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  return new ProviderError(`model call failed: ${(error as Error)?.message ?? String(error)}`, {
    kind: 'connection',
    cause: error,
  });
}

/**
 * One model call with retries on transient failures (429, 5xx, timeouts, broken output), honouring
 * retry-after. Aborts are never retried. Throws the last ProviderError when the budget is spent.
 */
export async function completeWithRetry(
  provider: Provider,
  request: CompletionRequest,
  options: RetryOptions,
): Promise<CompletionResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await provider.complete(request);
    } catch (caught) {
      if (request.signal?.aborted) throw request.signal.reason ?? caught;
      const error = asProviderError(caught);
      if (!error.isRetryable || attempt > options.maxRetries) throw error;
      const delay = Math.max(error.retryAfterMs ?? 0, backoffMs(attempt, options.baseMs, options.capMs));
      options.onRetry?.(error, attempt, delay);
      await sleep(delay, request.signal);
    }
  }
}
