import type { Config, ModelEndpoint } from '@herald/core';
import { createProvider } from '@herald/agent';
import type { Provider } from '@herald/agent';

/** A provider for one configured endpoint, with the main model's timeout. */
function providerAt(config: Config, endpoint: ModelEndpoint): Provider {
  return createProvider({
    provider: endpoint.provider,
    model: endpoint.model,
    // Local OpenAI-compatible servers ignore the key, but the SDK insists on one.
    apiKey: endpoint.apiKey ?? 'unused',
    baseURL: endpoint.baseURL,
    timeoutMs: config.model.timeoutMs,
  });
}

/** The main model: HERALD_MODEL, else none. */
export function providerFromConfig(config: Config): Provider | null {
  return config.model.endpoint ? providerAt(config, config.model.endpoint) : null;
}

/** The model that writes compression summaries: HERALD_SUMMARY_MODEL, else the main model. */
export function summariserFromConfig(config: Config): Provider | null {
  const summary = config.compression.summaryModel;
  return summary ? providerAt(config, summary) : providerFromConfig(config);
}

/** The model of delegate_task's children: HERALD_DELEGATION_MODEL, else none (the main model runs them). */
export function childProviderFromConfig(config: Config): Provider | null {
  const endpoint = config.delegation.model;
  return endpoint ? providerAt(config, endpoint) : null;
}
