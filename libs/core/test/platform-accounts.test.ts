import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseNamedChat, formatNamedChat, platformAccountNames, storedTarget, readStoredTarget } from '@herald/core';

// HERALD_PLATFORMS_FILE (issue 31 point 6): more bots per platform, refused at start with the
// field named when the file cannot be used (point 7).

function file(text: string, name = 'platforms.yaml'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'herald-accounts-')), name);
  writeFileSync(path, text);
  return path;
}

const TOKENS = { OPS_TOKEN: '111:ops-AAA', RESEARCH_TOKEN: '222:research-BBB', DISCORD_RESEARCH_TOKEN: 'MTIz.research.token' };

describe('platform accounts', () => {
  it('keeps TELEGRAM_BOT_TOKEN alone as the account default', () => {
    const config = loadConfig({ TELEGRAM_BOT_TOKEN: '123:abc' });
    expect(config.platforms.accounts.telegram.map((account) => account.account)).toEqual(['default']);
    expect(config.platforms.accounts.discord).toEqual([]);
  });

  it('adds the accounts of a YAML or JSON file, each with its own token and allowlist', () => {
    const yaml = file(
      [
        'telegram:',
        '  - {account: ops, token_env: OPS_TOKEN, allowed_users: ["1", "@ann"]}',
        '  - {account: research, token_env: RESEARCH_TOKEN}',
        'discord:',
        '  - {account: research, token_env: DISCORD_RESEARCH_TOKEN, allowed_users: "*"}',
      ].join('\n'),
    );
    const config = loadConfig({ ...TOKENS, TELEGRAM_BOT_TOKEN: '123:abc', TELEGRAM_ALLOWED_USERS: '9', HERALD_PLATFORMS_FILE: yaml });
    expect(config.platforms.accounts.telegram.map((account) => [account.account, account.botToken, account.allowedUsers])).toEqual([
      ['default', '123:abc', ['9']],
      ['ops', '111:ops-AAA', ['1', '@ann']],
      // Without its own allowlist an account takes the platform's.
      ['research', '222:research-BBB', ['9']],
    ]);
    expect(config.platforms.accounts.discord).toMatchObject([{ account: 'research', botToken: TOKENS.DISCORD_RESEARCH_TOKEN, allowedUsers: ['*'] }]);
    const json = file(JSON.stringify({ telegram: [{ account: 'ops', token_env: 'OPS_TOKEN' }] }), 'platforms.json');
    expect(loadConfig({ ...TOKENS, HERALD_PLATFORMS_FILE: json }).platforms.accounts.telegram).toMatchObject([{ account: 'ops', mode: 'polling' }]);
  });

  it('refuses a bad file at start, naming the field and never printing a token', () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      ['telegram:\n  - {account: ops, token_env: OPS_TOKEN}\n  - {account: ops, token_env: RESEARCH_TOKEN}', {}, /telegram\[1\]\.account: duplicate account 'ops'/],
      ['telegram:\n  - {account: default, token_env: OPS_TOKEN}', { TELEGRAM_BOT_TOKEN: '123:abc' }, /telegram\[0\]\.account: duplicate account 'default'/],
      ['telegram:\n  - {account: ops, token_env: MISSING_TOKEN}', {}, /telegram\[0\]\.token_env: the variable MISSING_TOKEN is not set/],
      ['telegram:\n  - {account: ops, token_env: OPS_TOKEN}\n  - {account: two, token_env: OPS_TOKEN}', {}, /telegram\[1\]\.token_env: OPS_TOKEN is the same bot as account 'ops'/],
      ['telegram:\n  - {account: Ops!, token_env: OPS_TOKEN}', {}, /telegram\[0\]\.account: expected an account name/],
      ['telegram:\n  - {account: ops, token: "111:x"}', {}, /telegram\[0\]/],
      ['irc:\n  - {account: ops, token_env: OPS_TOKEN}', {}, /HERALD_PLATFORMS_FILE \(.*\): /],
      ['telegram:\n  - {account: ops, token_env: DISCORD_RESEARCH_TOKEN}', {}, /telegram\[0\]\.token_env: DISCORD_RESEARCH_TOKEN is not a bot token/],
      ['telegram: [', {}, /not YAML or JSON/],
    ];
    for (const [text, env, message] of cases) {
      const load = () => loadConfig({ ...TOKENS, ...env, HERALD_PLATFORMS_FILE: file(text) });
      expect(load, text).toThrow(ConfigError);
      expect(load, text).toThrow(message);
      try {
        load();
      } catch (error) {
        for (const token of Object.values(TOKENS)) expect((error as Error).message).not.toContain(token);
      }
    }
    expect(() => loadConfig({ HERALD_PLATFORMS_FILE: '/nonexistent/platforms.yaml' })).toThrow(/HERALD_PLATFORMS_FILE \(\/nonexistent\/platforms\.yaml\): cannot read it \(ENOENT\)/);
  });

  it('adds Slack apps, each with its bot token, app token and signing secret named by variable', () => {
    const slackEnv = {
      SLACK_BOT_TOKEN: 'xoxb-1-default',
      SLACK_APP_TOKEN: 'xapp-1-A0DEFAULT-1-x',
      SLACK_SIGNING_SECRET: 'default-secret',
      SLACK_ALLOWED_USERS: 'U1',
      SLACK_ALLOWED_CHANNELS: 'C1',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
      SLACK_RESEARCH_BOT_TOKEN: 'xoxb-2-ops',
      SLACK_RESEARCH_APP_TOKEN: 'xapp-1-A0OPS-2-y',
      SLACK_RESEARCH_SIGNING_SECRET: 'ops-secret',
      POST_ONLY_BOT: 'xoxb-3-post',
    };
    const yaml = file(
      [
        'slack:',
        '  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, app_token_env: SLACK_RESEARCH_APP_TOKEN, signing_secret_env: SLACK_RESEARCH_SIGNING_SECRET, allowed_users: "*", allowed_channels: [C9]}',
        '  - {account: reports, token_env: POST_ONLY_BOT}',
      ].join('\n'),
    );
    const config = loadConfig({ ...slackEnv, HERALD_PLATFORMS_FILE: yaml });
    expect(config.platforms.accounts.slack).toEqual([
      {
        account: 'default',
        botToken: 'xoxb-1-default',
        appToken: 'xapp-1-A0DEFAULT-1-x',
        signingSecret: 'default-secret',
        allowedUsers: ['U1'],
        allowedChannels: ['C1'],
        apiUrl: 'http://127.0.0.1:9/api/',
      },
      { account: 'research', botToken: 'xoxb-2-ops', appToken: 'xapp-1-A0OPS-2-y', signingSecret: 'ops-secret', allowedUsers: ['*'], allowedChannels: ['C9'], apiUrl: 'http://127.0.0.1:9/api/' },
      // Post-only (cron reports): neither way in; the platform's allowlists.
      { account: 'reports', botToken: 'xoxb-3-post', appToken: undefined, signingSecret: undefined, allowedUsers: ['U1'], allowedChannels: ['C1'], apiUrl: 'http://127.0.0.1:9/api/' },
    ]);
    expect(platformAccountNames(config.platforms)).toEqual({ telegram: [], discord: [], slack: ['default', 'research', 'reports'] });

    const cases: [string, RegExp][] = [
      ['slack:\n  - {account: research, token_env: SLACK_RESEARCH_APP_TOKEN}', /slack\[0\]\.token_env: SLACK_RESEARCH_APP_TOKEN is not a bot token starting xoxb-/],
      ['slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, app_token_env: MISSING_APP}', /slack\[0\]\.app_token_env: the variable MISSING_APP is not set/],
      [
        'slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, app_token_env: SLACK_RESEARCH_SIGNING_SECRET}',
        /slack\[0\]\.app_token_env: SLACK_RESEARCH_SIGNING_SECRET is not an app-level token starting xapp-/,
      ],
      ['slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, app_token_env: SLACK_APP_TOKEN}', /slack\[0\]\.app_token_env: SLACK_APP_TOKEN is the same Slack app as account 'default'/],
      [
        'slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, app_token_env: OTHER_TOKEN_SAME_APP}',
        /slack\[0\]\.app_token_env: OTHER_TOKEN_SAME_APP is the same Slack app as account 'default'/,
      ],
      [
        'slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, signing_secret_env: SLACK_SIGNING_SECRET}',
        /slack\[0\]\.signing_secret_env: SLACK_SIGNING_SECRET is the same signing secret as account 'default'/,
      ],
      ['slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, signing_secret_env: no-such-name}', /slack\[0\]\.signing_secret_env: expected an environment variable name/],
      ['slack:\n  - {account: research, token_env: SLACK_BOT_TOKEN}', /slack\[0\]\.token_env: SLACK_BOT_TOKEN is the same bot as account 'default'/],
      ['slack:\n  - {account: research, token_env: SLACK_RESEARCH_BOT_TOKEN, signing_secret: x}', /slack\[0\]/],
    ];
    for (const [text, message] of cases) {
      const load = () => loadConfig({ ...slackEnv, OTHER_TOKEN_SAME_APP: 'xapp-1-A0DEFAULT-9-z', HERALD_PLATFORMS_FILE: file(text) });
      expect(load, text).toThrow(message);
      try {
        load();
      } catch (error) {
        for (const secret of ['xoxb-2-ops', 'xapp-1-A0OPS-2-y', 'ops-secret', 'default-secret']) expect((error as Error).message).not.toContain(secret);
      }
    }
  });

  it('reads and writes delivery targets that name an account', () => {
    expect(parseNamedChat('telegram@ops:42')).toEqual({ platform: 'telegram', account: 'ops', chatId: '42' });
    expect(parseNamedChat('discord@research:333:444')).toEqual({ platform: 'discord', account: 'research', chatId: '333', threadId: '444' });
    expect(parseNamedChat('telegram@default:42')).toEqual({ platform: 'telegram', chatId: '42' });
    expect(parseNamedChat('telegram:42')).toEqual({ platform: 'telegram', chatId: '42' });
    for (const bad of ['telegram@:42', 'telegram@Ops:42', 'telegram@o/p:42', 'irc@ops:42']) expect(() => parseNamedChat(bad), bad).toThrow();
    expect(formatNamedChat({ platform: 'telegram', account: 'ops', chatId: '42' })).toBe('telegram@ops:42');
    expect(formatNamedChat({ platform: 'telegram', account: 'default', chatId: '42' })).toBe('telegram:42');
    const stored = storedTarget({ account: 'ops', chatId: '42' });
    expect(stored).toEqual({ account: 'ops', chatId: '42' });
    expect(readStoredTarget(stored)).toEqual({ account: 'ops', chatId: '42' });
  });
});
