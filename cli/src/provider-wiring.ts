import type { Config } from '@herald/core';
import { createProvider } from '@herald/agent';
import type { Provider } from '@herald/agent';

export function providerFromConfig(config: Config): Provider | null {
  if (!config.model.endpoint) return null;
  return createProvider({
    provider: config.model.endpoint.provider,
    model: config.model.endpoint.model,
    // Local OpenAI-compatible servers ignore the key, but the SDK insists on one.
    apiKey: config.model.endpoint.apiKey ?? 'unused',
    baseURL: config.model.endpoint.baseURL,
    timeoutMs: config.model.timeoutMs,
  });
}

/** The model that writes compression summaries: HERALD_SUMMARY_MODEL, else the main model. */
export function summariserFromConfig(config: Config): Provider | null {
  const summary = config.compression.summaryModel;
  if (!summary) return providerFromConfig(config);
  return createProvider({
    provider: summary.provider,
    model: summary.model,
    apiKey: summary.apiKey ?? 'unused',
    baseURL: summary.baseURL,
    timeoutMs: config.model.timeoutMs,
  });
}
