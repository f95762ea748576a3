import { describe, expect, it } from 'vitest';
import { loadConfig, loadPrices, PriceConfigError } from '../src/index.ts';

const file = (text: string) => ({ path: '/etc/herald/prices.yaml', text });
const refusal = (text: string) => {
  try {
    loadPrices(file(text));
  } catch (error) {
    expect(error).toBeInstanceOf(PriceConfigError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
};

describe('the price table', () => {
  it('prices uncached input, cached input, cache writes and output per million tokens', () => {
    const prices = loadPrices(file('openai:\n  gpt-test: { input: 2, cached_input: 0.5, output: 8 }\n'));
    // 600 plain at $2, 400 cached at $0.50, 500 out at $8 per million.
    expect(prices.costOf('openai', 'gpt-test', { inputTokens: 1000, cachedInputTokens: 400, cacheWriteTokens: 0, outputTokens: 500 })).toEqual({ costUsd: 0.0054, priceKnown: true });
    // cached_input and cache_write default to the input price.
    const flat = loadPrices(file('{"work/llama-3": {"input": 1, "output": 1}}'));
    expect(flat.costOf('work', 'llama-3', { inputTokens: 1_000_000, cachedInputTokens: 500_000, cacheWriteTokens: 0, outputTokens: 0 })).toEqual({ costUsd: 1, priceKnown: true });
  });

  it('knows well-known models built in, dated names included, and the file wins over them', () => {
    const builtin = loadPrices(undefined);
    expect(builtin.priceOf('openai', 'gpt-4o-2024-08-06')).toMatchObject({ input: 2.5, output: 10 });
    expect(builtin.priceOf('openai', 'gpt-4o-mini-2024-07-18')).toMatchObject({ input: 0.15 });
    expect(builtin.priceOf('anthropic', 'claude-sonnet-4-5-20250929')).toMatchObject({ input: 3, cachedInput: 0.3, output: 15, cacheWrite: 3.75 });
    // A longer name is another model, not a snapshot: unknown unless listed itself.
    expect(builtin.priceOf('openai', 'o3-pro-2025-06-10')).toMatchObject({ input: 20, output: 80 });
    expect(builtin.priceOf('openai', 'o3-deep-research')).toBeUndefined();
    expect(builtin.priceOf('anthropic', 'claude-opus-4-9')).toBeUndefined();
    // Anthropic's input counts the cache reads and writes (libs/agent), each at its own price:
    // 100 plain at $3, 1,500 read at $0.30, 400 written at $3.75, 100 out at $15 per million.
    expect(builtin.costOf('anthropic', 'claude-sonnet-4-5', { inputTokens: 2000, cachedInputTokens: 1500, cacheWriteTokens: 400, outputTokens: 100 }).costUsd).toBe(0.00375);
    const own = loadPrices(file('prices:\n  openai:\n    gpt-4o: { input: 1, output: 4 }\n'));
    expect(own.priceOf('openai', 'gpt-4o-2024-08-06')).toMatchObject({ input: 1, output: 4 });
    expect(own.priceOf('azure', 'gpt-4o')).toMatchObject({ input: 2.5 });
  });

  it('costs an unknown model 0 and marks it unknown', () => {
    expect(loadPrices(undefined).costOf('openai', 'my-local-llama', { inputTokens: 5000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 500 })).toEqual({ costUsd: 0, priceKnown: false });
  });

  it('refuses a bad file at start, naming the file and the field', () => {
    expect(refusal('openai:\n  gpt-test: { input: -1, output: 8 }\n')).toBe('HERALD_PRICES_FILE (/etc/herald/prices.yaml): openai.gpt-test.input: expected 0 or more');
    expect(refusal('openai:\n  gpt-test: { input: 1 }\n')).toMatch(/^HERALD_PRICES_FILE \(\/etc\/herald\/prices\.yaml\): openai\.gpt-test\.output: /);
    expect(refusal('openai:\n  gpt-test: { input: "two", output: 8 }\n')).toMatch(/openai\.gpt-test\.input: expected a number of dollars per million tokens/);
    expect(refusal('openai:\n  gpt-test: { input: 1, output: 8, cached: 1 }\n')).toMatch(/openai\.gpt-test: .*cached/);
    expect(refusal('OpenAI:\n  gpt-test: { input: 1, output: 8 }\n')).toMatch(/: OpenAI\.gpt-test: a provider name is lowercase/);
    expect(refusal('openai: 3\n')).toMatch(/: openai: expected a map of model to prices/);
    expect(refusal('openai: [\n')).toMatch(/: not YAML or JSON/);
  });

  it('reads the budgets in dollars, 0 (off) by default, and refuses a bad amount naming the variable', () => {
    expect(loadConfig({}).usage).toEqual({ pricesFile: undefined, budgets: { personDay: 0, personMonth: 0, profileDay: 0, profileMonth: 0 } });
    expect(loadConfig({ HERALD_BUDGET_PERSON_DAY: '2.50', HERALD_PRICES_FILE: '/p.yaml' }).usage).toMatchObject({ pricesFile: '/p.yaml', budgets: { personDay: 2.5 } });
    expect(() => loadConfig({ HERALD_BUDGET_PROFILE_MONTH: '-3' })).toThrow(/^HERALD_BUDGET_PROFILE_MONTH: expected 0 \(off\) or more$/);
    expect(() => loadConfig({ HERALD_BUDGET_PERSON_MONTH: 'lots' })).toThrow(/^HERALD_BUDGET_PERSON_MONTH: expected an amount in dollars/);
  });
});
