import { describe, expect, it } from 'vitest';
import { assertSafeBind, ConfigError, loadConfig } from '@herald/core';
import { PROCESS_START_MS, spawnHerald } from '../support/stack.ts';
import { uniquePrefix } from '../support/test-database.ts';

describe('binding beyond localhost needs the API token (issue 17, point 12)', () => {
  it.each(['0.0.0.0', '::', '10.0.0.5', 'herald.internal', '[::]'])('refuses HOST=%s without HERALD_API_TOKEN, naming the setting and the fix', (host) => {
    const config = loadConfig({ HOST: host });
    expect(() => assertSafeBind(config)).toThrow(ConfigError);
    expect(() => assertSafeBind(config)).toThrow(/^HOST: .* HERALD_API_TOKEN is not set.*set HERALD_API_TOKEN/);
  });

  it.each(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])('allows HOST=%s (loopback) without a token', (host) => {
    expect(() => assertSafeBind(loadConfig({ HOST: host }))).not.toThrow();
  });

  it('allows any address with a token, and loopback is the default without one', () => {
    expect(() => assertSafeBind(loadConfig({ HOST: '0.0.0.0', HERALD_API_TOKEN: 'a-long-token' }))).not.toThrow();
    expect(() => assertSafeBind(loadConfig({}))).not.toThrow();
  });

  it(
    '`herald ingress` on 0.0.0.0 without a token exits 1 with the reason, before listening',
    async () => {
      const ingress = spawnHerald('ingress', {
        HOST: '0.0.0.0',
        PORT: '0',
        HERALD_API_TOKEN: '',
        HERALD_QUEUE_PREFIX: uniquePrefix(),
        LOG_LEVEL: 'info',
      });
      const code = await ingress.exited;
      expect(code).toBe(1);
      expect(ingress.output()).toContain('herald: invalid configuration: HOST: 0.0.0.0 is reachable from other machines and HERALD_API_TOKEN is not set');
      expect(ingress.output()).not.toContain('listening');
    },
    PROCESS_START_MS,
  );
});
