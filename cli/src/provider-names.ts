import { readFileSync } from 'node:fs';
import { declaredProviderNames, ProviderConfigError } from '@herald/core';
import type { Config } from '@herald/core';

// Apart from provider-wiring.ts, which builds the models: the ingress needs only the names, and
// must not load the model SDKs to get them (test/lazy-adapters.test.ts).

/** HERALD_PROVIDERS_FILE's text, if set; an unreadable file stops the start. */
export function readProvidersFile(config: Config): { path: string; text: string } | undefined {
  const path = config.model.providersFile;
  if (path === undefined) return undefined;
  try {
    return { path, text: readFileSync(path, 'utf8') };
  } catch (error) {
    throw new ProviderConfigError(`HERALD_PROVIDERS_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The provider names a profile's model may use, read without the keys (the ingress checks PATCHes with them). */
export function providerNamesFromConfig(config: Config): Set<string> {
  return declaredProviderNames(readProvidersFile(config));
}
