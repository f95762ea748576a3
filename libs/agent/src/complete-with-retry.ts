import { backoffMs, sleep } from '@herald/core';
import { recordModelCall, setSpanAttributes, withSpan } from '@herald/telemetry';
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

/** One attempt, counted (tokens included) and traced. */
function measuredCall(provider: Provider, request: CompletionRequest, attempt: number): Promise<CompletionResult> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const attributes = { 'gen_ai.system': provider.name, 'gen_ai.request.model': provider.model, 'herald.attempt': attempt };
  return withSpan('herald.model.call', attributes, async () => {
    try {
      const result = await provider.complete(request);
      recordModelCall(provider.name, provider.model, 'ok', seconds(), result.usage);
      setSpanAttributes({ 'gen_ai.usage.input_tokens': result.usage.inputTokens, 'gen_ai.usage.output_tokens': result.usage.outputTokens });
      return result;
    } catch (error) {
      recordModelCall(provider.name, provider.model, ProviderError.isInstance(error) ? error.kind : 'connection', seconds());
      throw error;
    }
  });
}

/**
 * One model call with retries on transient failures (429, 5xx, timeouts, broken output), honouring
 * retry-after. Aborts are never retried. Throws the last ProviderError when the budget is spent.
 */
export async function completeWithRetry(provider: Provider, request: CompletionRequest, options: RetryOptions): Promise<CompletionResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await measuredCall(provider, request, attempt);
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
