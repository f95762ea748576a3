import { loadProviders, modelChain } from '@herald/core';
import type { Config, Logger, ModelEndpoint, NamedProvider } from '@herald/core';
import type { Db } from '@herald/db';
import { FailoverProvider, LocalCooldowns, SharedCooldowns } from '@herald/agent';
import type { FailoverEvent, KeyCooldowns, Provider } from '@herald/agent';
import { readProvidersFile } from './provider-names.ts';
import type { NoticeBus } from '@herald/queue';

/** What every model of a process is built from: the named providers and the keys resting. */
export interface ModelWiring {
  config: Config;
  providers: ReadonlyMap<string, NamedProvider>;
  cooldowns: KeyCooldowns;
  logger: Logger;
}

/** The named providers of HERALD_PROVIDERS_FILE (and the implicit two), checked now: a bad file stops the start. */
function providersOf(config: Config, env: Readonly<Record<string, string | undefined>>): Map<string, NamedProvider> {
  return loadProviders(readProvidersFile(config), env);
}

const refOf = (endpoint: ModelEndpoint) => `${endpoint.provider}/${endpoint.model}`;

/**
 * One model chain behind failover: `field` names the first reference in errors, `fallbackField`
 * the rest (HERALD_MODEL_FALLBACKS for the deployment's, a profile's `model.fallbacks`).
 */
export function chainProvider(wiring: ModelWiring, refs: readonly string[], field: string, fallbackField = 'HERALD_MODEL_FALLBACKS'): Provider {
  const fieldOf = (index: number) => (index === 0 ? field : `${fallbackField}[${index - 1}]`);
  const { config, cooldowns, logger } = wiring;
  // A key is named by its variable (`provider:VARIABLE`), never by its value.
  const log = (event: FailoverEvent) => {
    if (event.type === 'model-failover') return logger.warn({ from: event.from, to: event.to, reason: event.reason }, 'model failover');
    const next = event.next ? { nextModel: event.next.model, nextKey: event.next.keyId } : {};
    const fields = { key: event.keyId, model: event.ref, restMs: event.restMs, ...next };
    // An auth error is not retried on the same key: the call goes on to the next key or model, if any is left.
    if (event.type === 'auth-failed') logger.warn(fields, `the provider refused this key (auth); skipping it${event.next ? ', trying the next' : '; no other key or model is left'}`);
    else logger.warn({ ...fields, kind: event.kind, status: event.status }, `model call failed on this key${event.next ? '; trying the next' : '; no other key or model is left'}`);
  };
  return new FailoverProvider({ chain: modelChain(refs, wiring.providers, fieldOf), cooldowns, timeoutMs: config.model.timeoutMs, onEvent: log });
}

/**
 * Reads and checks the providers and every configured model chain: an unknown provider, an unset
 * key variable or a broken file is refused here, at the start, naming the field.
 */
export function modelWiring(config: Config, env: Readonly<Record<string, string | undefined>>, cooldowns: KeyCooldowns, logger: Logger): ModelWiring {
  const wiring = { config, providers: providersOf(config, env), cooldowns, logger };
  providerFromConfig(wiring);
  summariserFromConfig(wiring);
  childProviderFromConfig(wiring);
  return wiring;
}

/** Cool-downs shared with every other process through the notice bus and Postgres. */
export async function sharedCooldowns(config: Config, db: Db, bus: NoticeBus, logger: Logger): Promise<KeyCooldowns> {
  const cooldowns = new SharedCooldowns({
    db,
    notices: bus,
    channel: `${config.redis.queuePrefix}:provider-cooldown`,
    onError: (error) => logger.warn({ err: error }, 'sharing a key cool-down failed; other processes learn of it when the key fails for them'),
  });
  await cooldowns.start();
  return cooldowns;
}

/** A process's models without sharing (tools and tests that call a model once). */
export function localModelWiring(config: Config, env: Readonly<Record<string, string | undefined>>, logger: Logger): ModelWiring {
  return modelWiring(config, env, new LocalCooldowns(), logger);
}

/** The main model: HERALD_MODEL then HERALD_MODEL_FALLBACKS, else none. */
export function providerFromConfig(wiring: ModelWiring): Provider | null {
  const { endpoint, fallbacks } = wiring.config.model;
  return endpoint ? chainProvider(wiring, [refOf(endpoint), ...fallbacks], 'HERALD_MODEL') : null;
}

/** The model that writes compression summaries: HERALD_SUMMARY_MODEL, else the main model. */
export function summariserFromConfig(wiring: ModelWiring): Provider | null {
  const summary = wiring.config.compression.summaryModel;
  return summary ? chainProvider(wiring, [refOf(summary)], 'HERALD_SUMMARY_MODEL') : providerFromConfig(wiring);
}

/** The model of delegate_task's children: HERALD_DELEGATION_MODEL, else none (the main model runs them). */
export function childProviderFromConfig(wiring: ModelWiring): Provider | null {
  const endpoint = wiring.config.delegation.model;
  return endpoint ? chainProvider(wiring, [refOf(endpoint)], 'HERALD_DELEGATION_MODEL') : null;
}
