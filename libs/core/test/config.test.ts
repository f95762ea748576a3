import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTING_NAMES } from '@herald/core';

describe('loadConfig', () => {
  it('needs nothing on a fresh machine', () => {
    const config = loadConfig({});
    expect(config.database.url).toBe('postgres://127.0.0.1:5432/herald');
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.api.port).toBe(8080);
    expect(config.model.endpoint).toBeNull();
    expect(config.api.token).toBeUndefined();
    // Without a token the open API must not be reachable from other machines.
    expect(config.api.host).toBe('127.0.0.1');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('parses provider/model and the provider settings', () => {
    const config = loadConfig({
      HERALD_MODEL: 'anthropic/claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-x',
      HERALD_API_TOKEN: 'a-long-token',
    });
    expect(config.model.endpoint).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'sk-ant-x', baseURL: undefined });
    expect(config.api.host).toBe('0.0.0.0');
  });

  it('accepts an OpenAI-compatible server without a key', () => {
    const config = loadConfig({ HERALD_MODEL: 'openai/llama3.1', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(config.model.endpoint?.baseURL).toBe('http://127.0.0.1:11434/v1');
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT: expected a number$/],
    [{ PORT: '70000' }, /^PORT: expected at most 65535/],
    [{ HERALD_MODEL: 'gpt-4.1-mini' }, /^HERALD_MODEL: expected provider\/model/],
    [{ HERALD_MODEL: 'openai/gpt-4.1-mini' }, /^OPENAI_API_KEY: required when HERALD_MODEL uses provider openai .*, it is not set$/],
    [{ TELEGRAM_BOT_TOKEN: '1:a', TELEGRAM_MODE: 'webhook' }, /^TELEGRAM_WEBHOOK_SECRET: required when TELEGRAM_MODE is webhook .*, it is not set$/],
    [{ SLACK_BOT_TOKEN: 'xoxp-user-token' }, /^SLACK_BOT_TOKEN: expected a bot token starting xoxb-/],
    [{ SLACK_SIGNING_SECRET: 'secret' }, /^SLACK_BOT_TOKEN: required when SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set/],
    [{ SLACK_BOT_TOKEN: 'xoxb-1-a', SLACK_APP_TOKEN: 'xoxb-1-a' }, /^SLACK_APP_TOKEN: expected an app-level token starting xapp-/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: expected a URL like postgres:/],
    [{ DATABASE_READ_URL: 'mysql://u:pw@replica/x' }, /^DATABASE_READ_URL: expected a URL like postgres:\/\/user@replica\.example\.com:5432\/herald$/],
    [{ REDIS_URL: 'nope' }, /^REDIS_URL: expected a URL like redis:/],
    [{ HERALD_API_TOKEN: 'short' }, /^HERALD_API_TOKEN: expected at least 8 characters$/],
    [{ HERALD_SANDBOX: 'docker' }, /^HERALD_SANDBOX: expected bwrap or none$/],
    [{ HERALD_SANDBOX_ENV: 'GITHUB_TOKEN,not a name' }, /^HERALD_SANDBOX_ENV: expected environment variable names separated by commas/],
    [{ HERALD_SANDBOX_ENV: 'GITHUB_TOKEN,DATABASE_URL,HERALD_API_TOKEN' }, /^HERALD_SANDBOX_ENV: DATABASE_URL, HERALD_API_TOKEN are Herald settings, never passed to tools$/],
    [{ HERALD_SANDBOX_ENV: 'OPENAI_API_KEY' }, /^HERALD_SANDBOX_ENV: OPENAI_API_KEY is a Herald setting, never passed to tools$/],
    [{ HERALD_SANDBOX_READONLY_PATHS: 'opt/tools' }, /^HERALD_SANDBOX_READONLY_PATHS: expected absolute paths/],
    [{ HERALD_SMTP_URL: 'https://u:hunter22@mail.example.com' }, /^HERALD_SMTP_URL: expected a URL like smtps:\/\/user:password@smtp\.example\.com:465/],
    [{ HERALD_SMTP_URL: 'smtps://u:hunter22@mail.example.com' }, /^HERALD_MAIL_FROM: required when HERALD_SMTP_URL is set .*, it is not set$/],
    [{ HERALD_MAIL_FROM: 'Herald <not an address>' }, /^HERALD_MAIL_FROM: expected an address like/],
    [{ HERALD_MAIL_ALLOWED_DOMAINS: 'example.com,not a domain' }, /^HERALD_MAIL_ALLOWED_DOMAINS: expected domain names/],
  ])('fails with one line naming the variable: %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads DATABASE_READ_URL (a replica for the reads that tolerate lag), unset by default', () => {
    expect(loadConfig({}).database.readUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_READ_URL: ' postgres://r@replica:5432/herald ' }).database.readUrl).toBe('postgres://r@replica:5432/herald');
  });

  it('reads the e-mail settings, and never prints the SMTP password', () => {
    expect(loadConfig({}).platforms).toMatchObject({ email: null, mailAllowedDomains: [] });
    const config = loadConfig({ HERALD_SMTP_URL: 'smtps://u:hunter22@mail.example.com:465', HERALD_MAIL_FROM: 'Herald <r@example.com>', HERALD_MAIL_ALLOWED_DOMAINS: 'Example.com, .ops.example.org' });
    expect(config.platforms.email).toEqual({ smtpUrl: 'smtps://u:hunter22@mail.example.com:465', from: 'Herald <r@example.com>' });
    expect(config.platforms.mailAllowedDomains).toEqual(['example.com', 'ops.example.org']);
    expect(() => loadConfig({ HERALD_SMTP_URL: 'smtp://u:hunter22@mail.example.com' })).toThrow(/^(?!.*hunter22)/s);
  });

  it('reads Slack: off without its bot token, the API base with one trailing slash', () => {
    expect(loadConfig({}).platforms.slack).toBeNull();
    expect(
      loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1-a', SLACK_APP_TOKEN: 'xapp-1-A0APP-1-x', SLACK_ALLOWED_USERS: 'U1, U2', SLACK_ALLOWED_CHANNELS: 'C1', SLACK_API_URL: 'http://127.0.0.1:9/api' }).platforms
        .slack,
    ).toEqual({
      account: 'default',
      botToken: 'xoxb-1-a',
      appToken: 'xapp-1-A0APP-1-x',
      signingSecret: undefined,
      allowedUsers: ['U1', 'U2'],
      allowedChannels: ['C1'],
      apiUrl: 'http://127.0.0.1:9/api/',
    });
  });

  it('confines tools by default, and grants only the names an operator lists', () => {
    expect(loadConfig({}).tools.sandbox).toEqual({
      mode: 'bwrap',
      env: [],
      networkToolsets: [],
      userNamespaceToolsets: [],
      user: { uid: 61000, gid: 61000 },
      readOnlyPaths: [],
      memoryMb: 2048,
      maxProcesses: 256,
      maxFileMb: 1024,
    });
    const granted = loadConfig({ HERALD_SANDBOX_ENV: ' GITHUB_TOKEN , NPM_TOKEN', HERALD_SANDBOX_NETWORK: 'terminal', HERALD_SANDBOX_USERNS: 'terminal' }).tools.sandbox;
    expect(granted.env).toEqual(['GITHUB_TOKEN', 'NPM_TOKEN']);
    expect(granted.networkToolsets).toEqual(['terminal']);
    expect(granted.userNamespaceToolsets).toEqual(['terminal']);
    expect(loadConfig({ HERALD_SANDBOX_UID: '5000', HERALD_SANDBOX_GID: '5001' }).tools.sandbox.user).toEqual({ uid: 5000, gid: 5001 });
    // Root is never the sandbox's user.
    expect(() => loadConfig({ HERALD_SANDBOX_UID: '0' })).toThrow(/HERALD_SANDBOX_UID/);
  });

  it('reads the long-session settings, with Hermes defaults, and refuses bad ones', () => {
    expect(loadConfig({}).compression).toEqual({ contextTokens: undefined, threshold: 0.5, summaryModel: undefined, onFailure: 'fallback', messageLimit: 5000 });
    const config = loadConfig({
      HERALD_CONTEXT_TOKENS: '64000',
      HERALD_COMPRESSION_THRESHOLD: '0.8',
      HERALD_SUMMARY_MODEL: 'openai/gpt-4.1-mini',
      HERALD_COMPRESSION_ON_FAILURE: 'abort',
      HERALD_COMPRESSION_MESSAGE_LIMIT: '200',
    });
    expect(config.compression).toEqual({
      contextTokens: 64000,
      threshold: 0.8,
      summaryModel: { provider: 'openai', model: 'gpt-4.1-mini', apiKey: undefined, baseURL: undefined },
      onFailure: 'abort',
      messageLimit: 200,
    });
    for (const [name, value] of [
      ['HERALD_CONTEXT_TOKENS', '12k'],
      ['HERALD_COMPRESSION_THRESHOLD', '1.5'],
      ['HERALD_SUMMARY_MODEL', 'gpt-4'],
      ['HERALD_COMPRESSION_ON_FAILURE', 'drop'],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), name).toThrow(new RegExp(`^${name}: `));
    }
  });

  it('streams answers into every chat platform unless turned off, for all or per platform', () => {
    expect(loadConfig({}).platforms.streaming).toEqual({ telegram: true, discord: true, slack: true });
    expect(loadConfig({ HERALD_STREAMING_TELEGRAM: 'off' }).platforms.streaming).toEqual({ telegram: false, discord: true, slack: true });
    expect(loadConfig({ HERALD_STREAMING_DISCORD: 'off' }).platforms.streaming).toEqual({ telegram: true, discord: false, slack: true });
    expect(loadConfig({ HERALD_STREAMING_SLACK: 'off' }).platforms.streaming).toEqual({ telegram: true, discord: true, slack: false });
    expect(loadConfig({ HERALD_STREAMING: 'off' }).model.streaming).toBe(false);
    expect(() => loadConfig({ HERALD_STREAMING_TELEGRAM: 'sometimes' })).toThrow(/^HERALD_STREAMING_TELEGRAM: expected on or off$/m);
    expect(SETTING_NAMES).toEqual(expect.arrayContaining(['HERALD_STREAMING_TELEGRAM', 'HERALD_STREAMING_DISCORD', 'HERALD_STREAMING_SLACK']));
  });

  it('reports every bad variable, one per line', () => {
    expect.assertions(1);
    try {
      loadConfig({ PORT: 'x', REDIS_URL: 'y' });
    } catch (error) {
      expect((error as Error).message.split('\n').sort()).toEqual([expect.stringMatching(/^PORT: /), expect.stringMatching(/^REDIS_URL: /)]);
    }
  });

  it('builds each section from its own variables', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://herald@db:5432/herald',
      HERALD_DB_POOL_SIZE: '4',
      HERALD_DATABASE: 'external',
      HERALD_DATA_DIR: '/var/lib/herald',
      HERALD_QUEUE_PREFIX: 'h2',
      HERALD_QUEUE: 'postgres',
      HERALD_URL: 'http://api:8080',
      HERALD_SESSION_BACKLOG: '7',
      HERALD_MODEL_TIMEOUT_MS: '5000',
      TELEGRAM_BOT_TOKEN: '123:abc',
      TELEGRAM_ALLOWED_USERS: ' 1, @ann ,',
      TELEGRAM_API_ROOT: 'http://telegram.test///',
      HERALD_WORKER_CONCURRENCY: '2',
      HERALD_REVIEW_TIMEOUT_MS: '60000',
      HERALD_CRON_MAX_FAILURES: '9',
      HERALD_TOOL_PLUGINS: './a.js, ./b.js',
      LOG_LEVEL: 'debug',
    });
    expect(config.database).toEqual({ url: 'postgres://herald@db:5432/herald', readUrl: undefined, poolSize: 4, mode: 'external', urlGiven: true, dataDir: '/var/lib/herald' });
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', queuePrefix: 'h2', queueMode: 'postgres', urlGiven: false });
    expect(config.api.url).toBe('http://api:8080');
    expect(config.limits.sessionBacklog).toBe(7);
    expect(config.model.timeoutMs).toBe(5000);
    expect(config.platforms.telegram).toMatchObject({ botToken: '123:abc', allowedUsers: ['1', '@ann'], apiRoot: 'http://telegram.test', mode: 'polling' });
    expect(config.platforms.discord).toBeNull();
    expect(config.roles.worker.concurrency).toBe(2);
    expect(config.roles.reviewer.timeoutMs).toBe(60_000);
    expect(config.roles.scheduler.cronMaxFailures).toBe(9);
    expect(config.tools.plugins).toEqual(['./a.js', './b.js']);
    expect(config.observability.logLevel).toBe('debug');
    // A role holding the config cannot change it under the others.
    expect(Object.isFrozen(config.roles)).toBe(true);
  });

  it('leaves the run mode to the command (auto) and says whether the URLs were set or defaulted', () => {
    const config = loadConfig({ REDIS_URL: 'redis://cache:6379' });
    expect(config.database).toMatchObject({ url: 'postgres://127.0.0.1:5432/herald', mode: 'auto', urlGiven: false, dataDir: resolve('./.herald') });
    expect(config.redis).toMatchObject({ url: 'redis://cache:6379', queueMode: 'auto', urlGiven: true });
    expect(() => loadConfig({ HERALD_QUEUE: 'sqlite' })).toThrow(/^HERALD_QUEUE: expected auto, redis or postgres$/);
    expect(() => loadConfig({ HERALD_DATABASE: 'remote' })).toThrow(/^HERALD_DATABASE: expected auto, embedded or external$/);
  });

  it('never prints the password of a DATABASE_URL it refuses', () => {
    expect.assertions(2);
    try {
      loadConfig({ DATABASE_URL: 'mysql://herald:hunter2-secret@db:3306/herald' });
    } catch (error) {
      expect((error as Error).message).toBe('DATABASE_URL: expected a URL like postgres://user@127.0.0.1:5432/herald');
      expect((error as Error).message).not.toContain('hunter2');
    }
  });

  it('names every variable it refuses without printing any value', () => {
    // Every setting at once, each holding a value that is wrong for most and a secret for some.
    const env = Object.fromEntries(SETTING_NAMES.map((name) => [name, `\u0000 s3cret-${name.toLowerCase()}`]));
    expect.assertions(3);
    try {
      loadConfig(env);
    } catch (error) {
      const message = (error as Error).message;
      expect(message).not.toMatch(/s3cret/);
      expect(message).toMatch(/^DATABASE_URL: /m);
      expect(message).toMatch(/^TELEGRAM_BOT_TOKEN: /m);
    }
  });
});
