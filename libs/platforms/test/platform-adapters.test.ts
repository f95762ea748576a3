import { describe, expect, it } from 'vitest';
import { CHAT_PLATFORMS, parseNamedChat, readStoredTarget, storedTarget, TargetSyntaxError } from '@herald/core';
import type { PlatformsConfig } from '@herald/core';
import { PLATFORM_ADAPTERS } from '../src/index.ts';
import { discordAdapter } from '../src/discord/index.ts';
import { slackAdapter } from '../src/slack/index.ts';
import { telegramAdapter } from '../src/telegram/index.ts';

const NONE: PlatformsConfig = {
  telegram: null,
  discord: null,
  slack: null,
  email: null,
  mailAllowedDomains: [],
  accounts: { telegram: [], discord: [], slack: [] },
  platformsFile: undefined,
  deliveryPollMs: 1000,
  streaming: { telegram: true, discord: true, slack: true },
};

describe('the platform contract (issue 30, point 1)', () => {
  it('has one adapter per platform of the registry, each under its own name', () => {
    expect(Object.keys(PLATFORM_ADAPTERS).sort()).toEqual([...CHAT_PLATFORMS].sort());
    for (const [name, adapter] of Object.entries(PLATFORM_ADAPTERS)) {
      expect(adapter.name).toBe(name);
      expect(adapter.lease).toBe('one-connection-per-account');
      expect(adapter.rateLimits.maxMessageChars).toBeGreaterThan(1000);
      expect(adapter.senderFor(NONE)).toBeUndefined();
    }
  });

  it('reads and writes each platform target syntax through the one parser', () => {
    for (const adapter of Object.values(PLATFORM_ADAPTERS)) {
      const chat = adapter.parseTarget(`${adapter.name}:-100123:7`);
      expect(chat).toEqual({ platform: adapter.name, chatId: '-100123', threadId: '7' });
      expect(adapter.formatTarget(chat)).toBe(`${adapter.name}:-100123:7`);
      expect(adapter.parseTarget('42')).toEqual({ platform: adapter.name, chatId: '42' });
      expect(() => adapter.parseTarget(`${adapter.name}:a b`)).toThrow(TargetSyntaxError);
    }
    expect(() => parseNamedChat('api:u1')).toThrow(/not a chat platform/);
    expect(() => parseNamedChat('telegram:1:2:3')).toThrow(/cannot read/);
  });

  it('stores a delivery target with only what is set and reads it back whole', () => {
    const stored = storedTarget({ chatId: '5', chatType: 'dm', threadId: '', replyTo: '9', via: { interactionToken: 't' } });
    expect(stored).toEqual({ chatId: '5', chatType: 'dm', replyTo: '9', interactionToken: 't' });
    expect(readStoredTarget(stored)).toEqual({ chatId: '5', chatType: 'dm', replyTo: '9', via: { interactionToken: 't' } });
    for (const adapter of Object.values(PLATFORM_ADAPTERS)) expect(adapter.readTarget({ chatType: 'dm' })).toBeUndefined();
  });

  it('checks the Telegram webhook secret header, and refuses without a configured secret', () => {
    const settings = { botToken: '1:a', mode: 'webhook' as const, webhookSecret: 'right-secret', webhookUrl: undefined, allowedUsers: [], apiRoot: 'http://127.0.0.1:1', pollTimeoutSeconds: 1 };
    const check = telegramAdapter.verifyWebhook;
    expect(check).toBeDefined();
    expect(check?.(settings, { 'x-telegram-bot-api-secret-token': 'right-secret' })).toBe(true);
    expect(check?.(settings, { 'x-telegram-bot-api-secret-token': 'wrong-secret' })).toBe(false);
    expect(check?.(settings, {})).toBe(false);
    expect(check?.({ ...settings, webhookSecret: undefined }, { 'x-telegram-bot-api-secret-token': 'right-secret' })).toBe(false);
    expect(discordAdapter.verifyWebhook).toBeUndefined();
  });

  it('streams drafts and sends files on a platform with several accounts, each call through the account its target names', async () => {
    const app = (account: string) => ({
      account,
      botToken: `xoxb-${account}`,
      appToken: undefined,
      signingSecret: undefined,
      allowedUsers: [],
      allowedChannels: [],
      apiUrl: 'http://127.0.0.1:9/api/',
    });
    const sender = slackAdapter.senderFor({ ...NONE, accounts: { ...NONE.accounts, slack: [app('default'), app('second')] } });
    expect(sender?.drafts).toBeDefined();
    expect(sender?.sendFile).toBeDefined();
    await expect(sender?.drafts?.post({ account: 'third', chatId: 'C1' }, 'hi', true, AbortSignal.timeout(1000))).rejects.toThrow(/no slack account 'third' here/);
  });
});
