import { describe, expect, it } from 'vitest';
import { ACCOUNT_NAME } from '@herald/core';
import { bindingListSchema, boundAccount, profileFor, winningBinding } from '../src/index.ts';
import type { BindingFacts, BindingRule } from '../src/index.ts';

const telegramDm: BindingFacts = { platform: 'telegram', account: 'ops', chatId: '42', chatType: 'dm', userId: 'telegram:42' };
const discordChannel: BindingFacts = { platform: 'discord', chatId: '333', chatType: 'group', guildId: '222', userId: 'discord:7' };

describe('bindings: the most specific match wins, else main', () => {
  const rules: BindingRule[] = [
    { platform: 'telegram', profile: 'plat' },
    { platform: 'telegram', account: 'ops', profile: 'acct' },
    { platform: 'discord', guild_id: '222', profile: 'guild' },
    { platform: 'discord', channel_id: '333', profile: 'channel' },
    { chat_id: '42', profile: 'chat' },
  ];

  it('a chat beats a channel beats an account beats a platform, whatever their order', () => {
    expect(profileFor(rules, telegramDm)).toBe('chat');
    expect(profileFor(rules, { ...telegramDm, chatId: '43', userId: 'telegram:43' })).toBe('acct');
    expect(profileFor(rules, { ...telegramDm, account: undefined, chatId: '43' })).toBe('plat');
    expect(profileFor(rules, discordChannel)).toBe('channel');
    expect(profileFor(rules, { ...discordChannel, chatId: '334' })).toBe('guild');
    expect(profileFor([...rules].reverse(), telegramDm)).toBe('chat');
    expect(profileFor([...rules].reverse(), discordChannel)).toBe('channel');
  });

  it('sends what nothing matches to main; on a tie the earlier rule wins', () => {
    expect(profileFor(rules, { platform: 'api', chatId: 'c', chatType: 'dm', userId: 'api:u' })).toBe('main');
    expect(profileFor([], telegramDm)).toBe('main');
    const tie: BindingRule[] = [
      { account: 'ops', profile: 'first' },
      { account: 'ops', profile: 'second' },
    ];
    expect(winningBinding(tie, telegramDm)).toEqual({ index: 0, rule: tie[0] });
  });

  it('matches a person bare or qualified, and the default account when none is named', () => {
    expect(profileFor([{ platform: 'telegram', user_id: '42', profile: 'p' }], telegramDm)).toBe('p');
    expect(profileFor([{ user_id: 'telegram:42', profile: 'p' }], telegramDm)).toBe('p');
    expect(profileFor([{ user_id: 'discord:42', profile: 'p' }], telegramDm)).toBe('main');
    expect(profileFor([{ account: 'default', profile: 'd' }], { ...telegramDm, account: undefined })).toBe('d');
    // A rule must match every field it names.
    expect(profileFor([{ platform: 'discord', chat_id: '42', profile: 'p' }], telegramDm)).toBe('main');
  });

  it('refuses a rule without a field, with an unknown field or platform, or a bad profile name', () => {
    const bad = [
      [{ profile: 'ops' }],
      [{ platform: 'telegram', room: 'x', profile: 'ops' }],
      [{ platform: 'irc', profile: 'ops' }],
      [{ platform: 'telegram', profile: 'Ops' }],
      [{ chat_id: 'a\u0000b', profile: 'ops' }],
    ];
    for (const list of bad) expect(bindingListSchema.safeParse(list).success, JSON.stringify(list)).toBe(false);
    expect(bindingListSchema.safeParse([{ platform: 'telegram', account: 'ops', profile: 'ops' }]).success).toBe(true);
  });

  it("names the account a profile's messages leave through when a target names none", () => {
    const bound: BindingRule[] = [
      { platform: 'discord', account: 'research', profile: 'research' },
      { platform: 'telegram', account: 'ops', profile: 'ops' },
    ];
    expect(boundAccount(bound, 'ops', 'telegram')).toBe('ops');
    expect(boundAccount(bound, 'ops', 'discord')).toBeUndefined();
    expect(boundAccount(bound, 'main', 'telegram')).toBeUndefined();
  });
});

describe('a binding names any account the platforms file can declare', () => {
  it.each([1, 40, 41, 64, 65])('an account name of %i characters is bound exactly when HERALD_PLATFORMS_FILE accepts it', (length) => {
    const account = 'a'.repeat(length);
    const accepted = bindingListSchema.safeParse([{ platform: 'telegram', account, profile: 'ops' }]).success;
    expect(accepted).toBe(ACCOUNT_NAME.test(account));
    expect(accepted).toBe(length <= 64);
  });
});
