import { PriceTable } from '@herald/core';
import type { ModelCallRow } from '@herald/inbox';
import { recordModelCost } from '@herald/telemetry';
import type { ModelCallRecord } from './tool-loop.ts';

const BUILTIN_PRICES = new PriceTable();

/**
 * A model call as stored (model_calls), priced from the deployment's price table (an unknown model
 * costs 0, marked so): a turn's own calls, a review's and a compression's summary alike.
 */
export function modelCallRow(call: ModelCallRecord | undefined, prices: PriceTable = BUILTIN_PRICES): ModelCallRow | null {
  if (!call) return null;
  const usage = call.result.usage;
  const cost = prices.costOf(call.provider, call.model, usage);
  recordModelCost(call.provider, call.model, cost.costUsd);
  return {
    provider: call.provider,
    model: call.model,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cached_input_tokens: usage.cachedInputTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    latency_ms: call.latencyMs,
    finish_reason: call.result.finishReason,
    key_name: call.result.keyName ?? null,
    cost_usd: cost.costUsd,
    price_known: cost.priceKnown,
  };
}
