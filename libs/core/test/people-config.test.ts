import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@herald/core';

describe('operators and limits in the config', () => {
  it('has no operators and every limit off by default', () => {
    const { people } = loadConfig({});
    expect(people.operators).toEqual([]);
    expect(Object.values(people.quotas).every((value) => value === 0)).toBe(true);
  });

  it('takes operators as qualified ids and limits as whole numbers', () => {
    const { people } = loadConfig({
      HERALD_OPERATORS: ' telegram:42 , discord:1234,api:ops ',
      HERALD_LIMIT_TURNS_PER_MINUTE: '20',
      HERALD_LIMIT_GLOBAL_CONCURRENT_TURNS: '500',
      HERALD_LIMIT_TOKENS_PER_DAY: '2000000',
      HERALD_LIMIT_ATTACHMENT_MB_PER_DAY: '5',
    });
    expect(people.operators).toEqual(['telegram:42', 'discord:1234', 'api:ops']);
    expect(people.quotas).toMatchObject({ turnsPerMinute: 20, globalConcurrentTurns: 500, tokensPerDay: 2_000_000, concurrentTurns: 0 });
    // The allowance is set in MB and counted in bytes.
    expect(people.quotas).toMatchObject({ attachmentBytesPerDay: 5 * 1024 * 1024, globalAttachmentBytesPerDay: 0 });
  });

  it.each([
    // A bare id is ambiguous across platforms; an operator must name the platform.
    [{ HERALD_OPERATORS: '42' }, /^HERALD_OPERATORS: expected user ids qualified by platform/],
    [{ HERALD_OPERATORS: 'telegram:42,matrix:7' }, /^HERALD_OPERATORS: expected user ids qualified by platform/],
    [{ HERALD_LIMIT_TURNS_PER_MINUTE: '-1' }, /^HERALD_LIMIT_TURNS_PER_MINUTE: expected 0 \(off\) or more/],
    [{ HERALD_LIMIT_TOKENS_PER_DAY: 'lots' }, /^HERALD_LIMIT_TOKENS_PER_DAY: expected a number/],
    [{ HERALD_LIMIT_CONCURRENT_TURNS: '1.5' }, /^HERALD_LIMIT_CONCURRENT_TURNS: expected a whole number/],
    [{ HERALD_LIMIT_ATTACHMENT_MB_PER_DAY: '0.5' }, /^HERALD_LIMIT_ATTACHMENT_MB_PER_DAY: expected a whole number/],
  ])('refuses %j, naming the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
