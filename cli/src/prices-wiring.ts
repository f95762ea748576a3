import { readFileSync } from 'node:fs';
import { loadPrices, PriceConfigError } from '@herald/core';
import type { Config, PriceTable } from '@herald/core';

/**
 * The price table model calls are billed by: HERALD_PRICES_FILE, checked now (a bad file stops the
 * start, naming the field), then the built-in prices.
 */
export function pricesFromConfig(config: Config): PriceTable {
  const path = config.usage.pricesFile;
  if (path === undefined) return loadPrices(undefined);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new PriceConfigError(`HERALD_PRICES_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return loadPrices({ path, text });
}
