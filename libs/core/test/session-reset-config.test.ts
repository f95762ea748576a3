import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, resetRuleFor } from '@herald/core';

describe('HERALD_SESSION_RESET', () => {
  it("is no reset by default, and reads rules with Hermes' defaults", () => {
    expect(loadConfig({}).sessionReset.rules).toEqual([]);
    const config = loadConfig({ HERALD_SESSION_RESET: '[{"platform":"telegram","chat_type":"group","mode":"daily","timezone":"Europe/Berlin"},{"mode":"idle"}]' });
    expect(config.sessionReset.rules).toEqual([
      { platform: 'telegram', chat_type: 'group', mode: 'daily', at_hour: 4, idle_minutes: 1440, timezone: 'Europe/Berlin' },
      { mode: 'idle', at_hour: 4, idle_minutes: 1440, timezone: 'UTC' },
    ]);
  });

  it('takes the first rule matching platform and chat type; none is no reset', () => {
    const rules = loadConfig({ HERALD_SESSION_RESET: '[{"platform":"discord","mode":"none"},{"chat_type":"dm","mode":"idle","idle_minutes":30},{"mode":"daily"}]' }).sessionReset.rules;
    expect(resetRuleFor(rules, 'discord', 'dm')).toBeUndefined();
    expect(resetRuleFor(rules, 'telegram', 'dm')).toMatchObject({ mode: 'idle', idle_minutes: 30 });
    expect(resetRuleFor(rules, 'telegram', 'group')).toMatchObject({ mode: 'daily' });
  });

  it('refuses bad rules naming the variable, never echoing the value', () => {
    for (const value of ['not json {secret-ish}', '[{"mode":"weekly"}]', '[{"mode":"daily","timezone":"Mars/Olympus"}]', '[{"mode":"idle","idle_minutes":0}]', '{"mode":"idle"}']) {
      let error: unknown;
      try {
        loadConfig({ HERALD_SESSION_RESET: value });
      } catch (caught) {
        error = caught;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^HERALD_SESSION_RESET: /);
      expect((error as Error).message).not.toContain('secret-ish');
    }
  });
});
