import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** What a model costs, in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  cachedInput: number;
  output: number;
  /** Tokens written into the provider's cache (Anthropic bills them above plain input). */
  cacheWrite: number;
}

/** The tokens of one model call, as the provider reported them (input includes the cached ones). */
export interface CallTokens {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** A call's cost; `priceKnown` false: neither the file nor the built-in table knows the model (cost 0). */
export interface CallCost {
  costUsd: number;
  priceKnown: boolean;
}

/**
 * Built-in list prices (USD per million tokens) of well-known OpenAI and Anthropic models, as the
 * providers published them, matched on the model's name or a dated snapshot of it
 * (`gpt-4o-2024-08-06` is `gpt-4o`, `claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`), never on
 * a longer name (`o3-pro` is not `o3`). Anthropic's cache writes are the five-minute ones, 1.25
 * times input. A model not listed costs 0, marked unknown; HERALD_PRICES_FILE adds models and
 * overrides these (a negotiated discount, a price change).
 */
const BUILTIN: Record<string, [input: number, cachedInput: number, output: number, cacheWrite?: number]> = {
  'gpt-5.2': [1.75, 0.175, 14],
  'gpt-5.1': [1.25, 0.125, 10],
  'gpt-5.1-codex': [1.25, 0.125, 10],
  'gpt-5.1-chat-latest': [1.25, 0.125, 10],
  'gpt-5': [1.25, 0.125, 10],
  'gpt-5-codex': [1.25, 0.125, 10],
  'gpt-5-chat-latest': [1.25, 0.125, 10],
  'gpt-5-mini': [0.25, 0.025, 2],
  'gpt-5-nano': [0.05, 0.005, 0.4],
  'gpt-5-pro': [15, 15, 120],
  'gpt-4.1': [2, 0.5, 8],
  'gpt-4.1-mini': [0.4, 0.1, 1.6],
  'gpt-4.1-nano': [0.1, 0.025, 0.4],
  'gpt-4o': [2.5, 1.25, 10],
  'gpt-4o-mini': [0.15, 0.075, 0.6],
  o1: [15, 7.5, 60],
  'o1-pro': [150, 150, 600],
  o3: [2, 0.5, 8],
  'o3-pro': [20, 20, 80],
  'o3-mini': [1.1, 0.55, 4.4],
  'o4-mini': [1.1, 0.275, 4.4],
  'claude-opus-4-5': [5, 0.5, 25, 6.25],
  'claude-opus-4-1': [15, 1.5, 75, 18.75],
  'claude-opus-4-0': [15, 1.5, 75, 18.75],
  'claude-opus-4': [15, 1.5, 75, 18.75],
  'claude-sonnet-4-5': [3, 0.3, 15, 3.75],
  'claude-sonnet-4-0': [3, 0.3, 15, 3.75],
  'claude-sonnet-4': [3, 0.3, 15, 3.75],
  'claude-3-7-sonnet': [3, 0.3, 15, 3.75],
  'claude-3-5-sonnet': [3, 0.3, 15, 3.75],
  'claude-haiku-4-5': [1, 0.1, 5, 1.25],
  'claude-3-5-haiku': [0.8, 0.08, 4, 1],
  'claude-3-haiku': [0.25, 0.03, 1.25, 0.3],
};

/** What may follow a known model's name: a dated snapshot (OpenAI's 2024-08-06, Anthropic's 20250929) or `latest`. */
const SNAPSHOT = /-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

const perMillion = z.number({ error: 'expected a number of dollars per million tokens' }).finite().min(0, { error: 'expected 0 or more' });

const priceEntry = z.strictObject({
  input: perMillion,
  cached_input: perMillion.optional(),
  output: perMillion,
  cache_write: perMillion.optional(),
});

const PROVIDER = /^[a-z][a-z0-9_-]{0,39}$/;

/** A price file or entry that cannot be used; the message names the file and the field. */
export class PriceConfigError extends Error {
  override readonly name = 'PriceConfigError';
}

/** The prices a deployment bills by: HERALD_PRICES_FILE's entries first, then the built-in table. */
export class PriceTable {
  readonly #file: ReadonlyMap<string, ModelPrice>;
  constructor(file: ReadonlyMap<string, ModelPrice> = new Map()) {
    this.#file = file;
  }

  /** The price of `provider/model`, or undefined when nobody knows it. */
  priceOf(provider: string, model: string): ModelPrice | undefined {
    return this.#file.get(`${provider}/${model}`) ?? snapshotOf(this.#file, `${provider}/`, model) ?? builtinPrice(model);
  }

  /** What one call cost: uncached input, cached input, cache writes and output at their prices. */
  costOf(provider: string, model: string, tokens: CallTokens): CallCost {
    const price = this.priceOf(provider, model);
    if (price === undefined) return { costUsd: 0, priceKnown: false };
    const cached = Math.min(tokens.cachedInputTokens, tokens.inputTokens);
    const written = Math.min(tokens.cacheWriteTokens, tokens.inputTokens - cached);
    const plain = tokens.inputTokens - cached - written;
    const micro = plain * price.input + cached * price.cachedInput + written * price.cacheWrite + tokens.outputTokens * price.output;
    // Stored as numeric(18,9): nine decimals are a billionth of a dollar.
    return { costUsd: Math.round(micro * 1000) / 1e9, priceKnown: true };
  }
}

/** `gpt-4o-2024-08-06` is `gpt-4o`: the price of the name the model is a dated snapshot of. */
function snapshotOf(prices: ReadonlyMap<string, ModelPrice>, prefix: string, model: string): ModelPrice | undefined {
  const snapshot = SNAPSHOT.exec(model);
  return snapshot ? prices.get(`${prefix}${model.slice(0, snapshot.index)}`) : undefined;
}

const BUILTIN_PRICES: ReadonlyMap<string, ModelPrice> = new Map(
  Object.entries(BUILTIN).map(([model, [input, cachedInput, output, cacheWrite]]) => [`/${model}`, { input, cachedInput, output, cacheWrite: cacheWrite ?? input }]),
);

function builtinPrice(model: string): ModelPrice | undefined {
  return BUILTIN_PRICES.get(`/${model}`) ?? snapshotOf(BUILTIN_PRICES, '/', model);
}

/**
 * HERALD_PRICES_FILE (YAML or JSON, optionally under a top-level `prices:`): per provider, per
 * model, dollars per million tokens for `input`, `cached_input` (default: input), `output` and
 * `cache_write` (default: input). Either nested, `{openai: {gpt-4.1: {input: 2, ...}}}`, or flat,
 * `{"openai/gpt-4.1": {input: 2, ...}}`. Checked at start: an error names the file and the field.
 */
export function loadPrices(file: { path: string; text: string } | undefined): PriceTable {
  if (!file) return new PriceTable();
  const source = `HERALD_PRICES_FILE (${file.path})`;
  let raw: unknown;
  try {
    raw = parseYaml(file.text);
  } catch (error) {
    throw new PriceConfigError(`${source}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const body = isObject(raw) && 'prices' in raw ? raw['prices'] : raw;
  if (body === null || body === undefined) return new PriceTable();
  if (!isObject(body)) throw new PriceConfigError(`${source}: the file: expected a map of provider to model to prices`);
  const prices = new Map<string, ModelPrice>();
  for (const [key, value] of Object.entries(body)) {
    const slash = key.indexOf('/');
    if (slash > 0) addPrice(prices, source, key.slice(0, slash), key.slice(slash + 1), value, key);
    else {
      if (!isObject(value)) throw new PriceConfigError(`${source}: ${key}: expected a map of model to prices, or "provider/model" as the key`);
      for (const [model, price] of Object.entries(value)) addPrice(prices, source, key, model, price, `${key}.${model}`);
    }
  }
  return new PriceTable(prices);
}

function addPrice(prices: Map<string, ModelPrice>, source: string, provider: string, model: string, value: unknown, field: string): void {
  if (!PROVIDER.test(provider)) throw new PriceConfigError(`${source}: ${field}: a provider name is lowercase letters, digits, - and _`);
  if (model.trim() === '') throw new PriceConfigError(`${source}: ${field}: the model name is empty`);
  const parsed = priceEntry.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.length ? `.${issue.path.join('.')}` : '';
    throw new PriceConfigError(`${source}: ${field}${path}: ${issue?.message ?? 'is invalid'}`);
  }
  const { input, output } = parsed.data;
  prices.set(`${provider}/${model}`, { input, output, cachedInput: parsed.data.cached_input ?? input, cacheWrite: parsed.data.cache_write ?? input });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
